// Entry of the publisher thread: the service runs TypeScript through tsx, and a worker thread
// does not inherit the parent's loader hooks, so it registers tsx before loading the worker.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
