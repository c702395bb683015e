//go:build nopool

package task

const poolActors = false
