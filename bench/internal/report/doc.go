// Package report holds the comparison table of the benchmark: one row per
// figure with rsbd's value, the peer's value measured in the same run, their
// ratio and the goal the ratio is held to; written as Markdown and JSON.
package report
