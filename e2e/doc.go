// Package e2e holds end-to-end tests that drive the real Claude Code CLI against the project's
// hooks (see README.md in this directory). It has no code of its own outside its tests.
package e2e
