package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// taskRef is how a command names its task: one TASK_ID argument, or
// --owner O --name N (looked up in the cron_tasks view).
type taskRef struct {
	fs          *flagSet
	owner, name *string
	// fixed, on task update, says that --owner and --name only select
	// the task: a task's owner and name cannot change.
	fixed bool
}

func addTaskRef(fs *flagSet) *taskRef {
	r := &taskRef{fs: fs}
	r.owner = fs.String("owner", "", "with --name: the task's `owner`, to name it instead of TASK_ID")
	r.name = fs.String("name", "", "with --owner: the task's `name`, to name it instead of TASK_ID")
	return r
}

// check checks the arguments without asking the daemon (usage errors).
func (r *taskRef) check() error {
	byName := r.fs.given("owner") || r.fs.given("name")
	path := r.fs.path
	switch {
	case byName && r.fs.NArg() > 0 && r.fixed:
		return fmt.Errorf("%w: %s: --owner and --name select the task to change, and a task's owner and name cannot change; give TASK_ID or --owner and --name, not both", errUsage, path)
	case byName && r.fs.NArg() > 0:
		return fmt.Errorf("%w: %s: give TASK_ID or --owner and --name, not both", errUsage, path)
	case byName && !(r.fs.given("owner") && r.fs.given("name")):
		return fmt.Errorf("%w: %s: --owner and --name go together to name a task", errUsage, path)
	case !byName && r.fs.NArg() == 0:
		return fmt.Errorf("%w: %s needs one TASK_ID (or --owner OWNER --name NAME)", errUsage, path)
	case r.fs.NArg() > 1:
		return fmt.Errorf("%w: %s takes one TASK_ID, got %d arguments", errUsage, path, r.fs.NArg())
	}
	return nil
}

// id is the task's ID: the argument as given, or the ID of the task of
// --owner named --name (a live one before a deleted one; of deleted ones,
// the latest).
func (r *taskRef) id(ctx context.Context, c *client) (string, error) {
	if err := r.check(); err != nil {
		return "", err
	}
	if r.fs.NArg() == 1 {
		return r.fs.Arg(0), nil
	}
	var found *crontasks.Task
	for cursor := ""; ; {
		q := url.Values{"owner": {*r.owner}, "limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page crontasks.Page
		if _, err := c.do(ctx, http.MethodGet, "/v1/tasks?"+q.Encode(), nil, &page); err != nil {
			return "", err
		}
		for i := range page.Tasks {
			t := &page.Tasks[i]
			if t.Name != *r.name {
				continue
			}
			switch {
			case found == nil,
				found.Status == "deleted" && t.Status != "deleted",
				found.Status == "deleted" && t.Status == "deleted" && t.UpdatedAt.After(found.UpdatedAt):
				found = t
			}
		}
		if page.Next == "" || page.Next == cursor {
			break
		}
		cursor = page.Next
	}
	if found == nil {
		return "", fmt.Errorf("no task named %q of owner %q (task list --owner %s --all lists the owner's tasks)",
			escapeControl(*r.name), escapeControl(*r.owner), escapeControl(*r.owner))
	}
	return found.ID.String(), nil
}
