package scheduler

import (
	"errors"
	"fmt"
	"sort"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
)

// MaxQueueLimit bounds one queue's limit (runs executing at once), as it
// bounds Config.Workers.
const MaxQueueLimit = 100000

// QueueStats are one named queue's figures (see Stats.Queues).
type QueueStats = worker.QueueStats

// CheckQueueName says why name cannot name a queue in the configuration,
// or nil: a task's queue follows the same rule (rules.QueueProblem: 1 to
// 64 ASCII letters, digits, '_', '.' and '-').
func CheckQueueName(name string) error {
	if name == "" {
		return errors.New("a queue name must not be empty")
	}
	if msg := rules.QueueProblem(name); msg != "" {
		return fmt.Errorf("queue name %q %s", name, msg)
	}
	return nil
}

// validateQueues checks Config.Queues, in name order.
func validateQueues(qs map[string]int) error {
	names := make([]string, 0, len(qs))
	for name := range qs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := CheckQueueName(name); err != nil {
			return err
		}
		if n := qs[name]; n < 1 || n > MaxQueueLimit {
			return fmt.Errorf("queue %q: the limit must be between 1 and %d, got %d", name, MaxQueueLimit, n)
		}
	}
	return nil
}
