package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
)

func init() {
	commands["version"] = command{summary: "print the version, commit and Go version", run: runVersion}
}

// version and commit may be set at link time (the Makefile does:
// -X main.version=… -X main.commit=…); otherwise they come from the
// binary's build info.
var version, commit string

// buildVersion is what `cronactor version` prints.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func readVersion() buildVersion {
	v := buildVersion{Version: version, Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		v.Go = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if v.Commit == "" {
					v.Commit = s.Value
				}
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	return v
}

func runVersion(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "version")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	v := readVersion()
	if *asJSON {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(env.stdout, string(b))
		return err
	}
	modified := ""
	if v.Modified {
		modified = " (modified)"
	}
	_, err := fmt.Fprintf(env.stdout, "cronactor %s\ncommit:  %s%s\ngo:      %s %s\n", v.Version, v.Commit, modified, v.Go, v.Platform)
	return err
}
