package simulation

// Timeline exposes timeline to the external tests.
var Timeline = timeline
