//go:build unix

package kinds_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cronactor/cronactor/actors/worker/kinds"
)

// The exec kind heartbeats while its command runs: the command ends only
// once three heartbeats were sent.
func TestExecHeartbeatsWhileTheCommandRuns(t *testing.T) {
	c := newCounter(3)
	flag := filepath.Join(t.TempDir(), "three")
	go func() {
		<-c.reached
		os.WriteFile(flag, nil, 0o600)
	}()
	script := `i=0; while [ ! -e ` + flag + ` ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; [ -e ` + flag + ` ]`
	if _, err := kinds.Exec().Handle(context.Background(), beating(`{"command":["sh","-c",`+jsonString(script)+`]}`, c)); err != nil {
		t.Fatalf("the command saw no three heartbeats: %v", err)
	}
}
