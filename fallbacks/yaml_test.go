package fallbacks_test

import (
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
)

func init() { fallbacks.SetTestCatalogReader(yamlfile.Catalog) }
