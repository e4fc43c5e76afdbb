package ledger_test

import (
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func init() { ledger.SetTestSlow(yamlfile.Item) }
