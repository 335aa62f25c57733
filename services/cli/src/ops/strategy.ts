/** The strategy side's offsets groups and strategy figures, for the operator commands (build, verify). */
export { refreshStrategyStats, strategyGroups } from '@vault-yield/projector';
