//go:build !nopool

package task

// poolActors: stopped Actors are reused (build tag nopool: they are not).
const poolActors = true
