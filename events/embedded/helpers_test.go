package embedded_test

import "time"

var testTime = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
