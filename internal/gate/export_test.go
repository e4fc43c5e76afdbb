package gate

// RunCounting is Run that also says how many times Board.Gate decided, for the external tests,
// which run the gate with a real agent's codec.
func RunCounting(cfg Config, decisions *int) int {
	cfg.decisions = decisions
	return Run(cfg)
}
