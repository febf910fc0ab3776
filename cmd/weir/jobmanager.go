package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/weirstream/weir/durable"
	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/metrics/prom"
	"github.com/weirstream/weir/rest"
)

// jobManagerAddressFile, in the JobManager's directory, holds the URL of
// its REST endpoint (useful with rest.port: 0).
const jobManagerAddressFile = "rest_address"

func newJobManagerCommand() *cobra.Command {
	return jobManagerCommand("jobmanager")
}

// newClusterCommand is Flink's start-cluster.sh as weir cluster start: the
// same session cluster as weir jobmanager (its TaskManager slots are in
// its process), in the foreground.
func newClusterCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Session cluster commands (weir cluster start = weir jobmanager)", Args: cobra.NoArgs}
	start := jobManagerCommand("start")
	start.Short = "Start a session cluster: a JobManager with local TaskManager slots (as weir jobmanager)"
	cmd.AddCommand(start)
	return cmd
}

func jobManagerCommand(use string) *cobra.Command {
	var configFile string
	var settings []string
	cmd := &cobra.Command{
		Use:   use,
		Short: "Run a JobManager: a session cluster with local slots that runs SQL jobs submitted over REST",
		Long: `Starts a JobManager (Flink's session cluster; its TaskManager slots are in the same process).
Jobs are submitted with weir submit FILE.sql (POST /v1/jobs); weir list, cancel, stop,
savepoint and checkpoints talk to it, as do Flink's REST paths (docs/rest-openapi.yaml).
GET /metrics on the REST port serves every running job's metrics to Prometheus.

The configuration is a file in Flink's config.yaml shape (--config), overridden by
$WEIR_PROPERTIES (YAML, one "key: value" a line, as Flink's FLINK_PROPERTIES), each key
overridable with -D key=value: rest.port (8081), rest.bind-address (127.0.0.1),
security.ssl.rest.enabled with security.ssl.rest.certificate and security.ssl.rest.key (PEM),
weir.rest.auth-token (a token every state-changing request must carry),
web.submit.enable, web.cancel.enable (true), taskmanager.numberOfTaskSlots (32),
weir.jobmanager.dir (.weir/jobmanager: the job store jobs.json and checkpoints),
metrics.reporter.prom.port (also serve /metrics on this port, as Flink's reporter), and the
jobs' defaults: execution.checkpointing.*, state.*, restart-strategy.*, parallelism.default.

Job history (finished, failed, cancelled, with their exceptions) is kept in jobs.json across
restarts. Jobs that had not ended when the JobManager stopped — SIGTERM, a crash, SIGKILL —
resume from their latest checkpoints when it starts again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runJobManager(cmd, configFile, settings) },
	}
	cmd.Flags().StringVarP(&configFile, "config", "c", "", "configuration file (Flink's config.yaml shape)")
	cmd.Flags().StringArrayVarP(&settings, "set", "D", nil, "a configuration key=value, overriding the file (repeatable)")
	return cmd
}

func runJobManager(cmd *cobra.Command, configFile string, settings []string) error {
	cfg, err := jobmanager.LoadConfigWith(configFile, os.Getenv(jobmanager.EnvProperties), settings)
	if err != nil {
		return err
	}
	log := logger(false)
	mem, err := applyProcessMemory(cfg)
	if err != nil {
		return err
	}
	if mem != "" {
		log.Info(mem)
	}
	dir := cfg.String(jobmanager.KeyDir, jobmanager.DefaultDir)
	// Open locks dir before anything else; the port is bound before any
	// job resumes, so a JobManager that cannot serve touches no job.
	m, err := jobmanager.Open(jobmanager.Options{Dir: dir, Config: cfg, Logger: log, DeferResume: true})
	if err != nil {
		return err
	}
	defer m.Close()
	ep, err := rest.Listen(m, cfg)
	if err != nil {
		return err
	}
	defer ep.Close()
	if err := m.SetRESTAddress(ep.URL()); err != nil {
		return err
	}
	m.Resume()
	if c, on, err := prom.FromConfig(func(k string) (string, bool) { v, ok := cfg[k]; return v, ok }); err != nil {
		return err
	} else if on {
		srv, err := prom.ListenCollector(c, ep.Collector())
		if err != nil {
			return err
		}
		defer srv.Close()
		log.Info("serving Prometheus metrics", "url", "http://"+srv.Addr().String()+"/metrics")
	}
	addrFile := filepath.Join(dir, jobManagerAddressFile)
	if err := durable.WriteFile(addrFile, []byte(ep.URL()+"\n")); err != nil {
		return err
	}
	defer os.Remove(addrFile)
	log.Info("JobManager started", "rest", ep.URL(), "dir", dir)
	fmt.Fprintf(cmd.OutOrStdout(), "JobManager REST endpoint: %s\n", ep.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case s := <-sig:
		log.Info("JobManager stopping: running jobs resume at its next start", "signal", s.String())
	case <-cmd.Context().Done():
	}
	return nil
}
