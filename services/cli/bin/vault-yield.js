#!/usr/bin/env node
// Thin launcher: registers tsx so the TypeScript sources run as they are, then hands over to main.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.js');
