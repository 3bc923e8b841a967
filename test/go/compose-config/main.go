// compose-config renders a compose project the way `docker compose config` does, with
// compose-go (github.com/compose-spec/compose-go/v2, the Compose reference implementation that
// docker compose itself loads files with), and prints it as JSON. The test of infra/node
// (test/integration/node-infra.test.ts) judges the templates by what it prints, so Compose's own
// interpolation, .env and env_file rules decide, not a re-implementation of them.
//
//	compose-config project DIR [KEY=VALUE ...]
//	    DIR/docker-compose.yml with DIR/.env, the KEY=VALUE pairs standing in for the shell
//	    (they win over .env, as the shell does). Nothing is read from this program's own
//	    environment. Prints {"project": <the resolved project>, "environment": <what
//	    interpolation saw>}; every service's env_file is folded into its environment, as
//	    `docker compose config` shows it.
//	compose-config dotenv FILE
//	    FILE read as Compose reads an env file; prints its variables as a JSON object.
//
// On an error (a ${VAR:?} whose VAR is unset or empty, a malformed file) it prints Compose's
// message to stderr and exits 1.
//
// The order of the options follows docker compose's own loader (docker/compose
// cmd/compose/compose.go, ProjectOptions.toProjectOptions, at
// 0144eb2e7096bdb6adef10b73bf2055ace318526): the shell first (it always wins), then the
// project's .env, then profiles and the name.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/dotenv"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: compose-config project DIR [KEY=VALUE ...] | compose-config dotenv FILE")
	}
	switch args[0] {
	case "project":
		return project(args[1], args[2:])
	case "dotenv":
		values, err := dotenv.Read(args[1])
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(values)
	default:
		return fmt.Errorf("unknown command %q: expected project or dotenv", args[0])
	}
}

func project(dir string, shell []string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	// With paths left as written, env_file entries are read relative to the current directory:
	// the project's own, as `docker compose` run in DIR reads them.
	if err := os.Chdir(abs); err != nil {
		return err
	}
	options, err := cli.NewProjectOptions(
		[]string{filepath.Join(abs, "docker-compose.yml")},
		cli.WithWorkingDirectory(abs),
		cli.WithEnv(shell),
		cli.WithEnvFiles(),
		cli.WithDotEnv,
		cli.WithDefaultProfiles(),
		cli.WithName(filepath.Base(abs)),
		// Paths as written (./reth-data, not this machine's absolute path).
		cli.WithResolvedPaths(false),
	)
	if err != nil {
		return err
	}
	loaded, err := options.LoadProject(context.Background())
	if err != nil {
		return err
	}
	rendered, err := loaded.MarshalJSON()
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"project":     json.RawMessage(rendered),
		"environment": loaded.Environment,
	})
}
