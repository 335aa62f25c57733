/** The market side's offsets groups and strategy figures, for the operator commands (build, verify). */
export { marketGroups, refreshStrategyStats } from '@vault-yield/projector';
