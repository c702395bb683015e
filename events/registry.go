package events

// Default is the registry of every event type the scheduler writes: the one
// place that maps stable type names to Go types and schema versions.
//
// To change an event's body, bump its schema version here and add an
// Upgrader from the previous version; stored events of older versions are
// upgraded when read. Golden streams under testdata/ must keep decoding.
var Default = func() *Registry {
	r := NewRegistry()
	r.Register(TaskCreated{}, 1, nil)
	r.Register(TaskUpdated{}, 1, nil)
	r.Register(TaskPaused{}, 1, nil)
	r.Register(TaskResumed{}, 1, nil)
	r.Register(TaskDeleted{}, 1, nil)
	r.Register(RunEnqueued{}, 1, nil)
	r.Register(RunStarted{}, 1, nil)
	r.Register(RunCompleted{}, 1, nil)
	r.Register(RunFailed{}, 1, nil)
	r.Register(RunDropped{}, 1, nil)
	r.Register(RunForcedEnd{}, 1, nil)
	r.Register(CheckpointSaved{}, 1, nil)
	return r
}()
