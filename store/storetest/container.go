package storetest

// The container of the tests: started with testcontainers-go, its port on
// 127.0.0.1 where the engine is on this machine.

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcmysql "github.com/testcontainers/testcontainers-go/modules/mysql"
	"github.com/testcontainers/testcontainers-go/wait"
)

// dockerAnswers reports whether a Docker engine answers, quickly: the
// probe is bounded by dockerProbeTimeout and survives testcontainers
// panicking when no engine is configured at all.
func dockerAnswers() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("docker: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), dockerProbeTimeout)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return err
	}
	return nil
}

// startContainer runs the shared MySQL container of image. It is ready
// when it answers a query over its published port: the official images'
// set-up server has no network, so the first answer is the real server's,
// whatever the log says on MySQL or MariaDB.
func startContainer(image string) server {
	source := "testcontainers " + image
	ctx, cancel := context.WithTimeout(context.Background(), containerTimeout)
	defer cancel()
	opts := []testcontainers.ContainerCustomizer{
		tcmysql.WithUsername("root"),
		tcmysql.WithPassword(containerPassword),
		tcmysql.WithDatabase("leaf"),
		testcontainers.WithLabels(map[string]string{ContainerLabel: "storetest"}),
	}
	// host is where the published port is dialled: 127.0.0.1 for an
	// engine on this machine, which publishes there alone (testcontainers
	// would dial the bridge's gateway from a machine that is itself a
	// container); else the engine's host.
	host := ""
	if localEngine(os.Getenv("DOCKER_HOST")) {
		host = "127.0.0.1"
		opts = append(opts, testcontainers.WithHostConfigModifier(onLoopback))
	}
	dsnAt := func(h string, port network.Port) string {
		if host != "" {
			h = host
		}
		return fmt.Sprintf("root:%s@tcp(%s)/", containerPassword, net.JoinHostPort(h, strconv.Itoa(int(port.Num()))))
	}
	opts = append(opts, testcontainers.WithWaitStrategyAndDeadline(containerTimeout,
		wait.ForSQL(mysqlPort, "mysql", dsnAt).WithStartupTimeout(containerTimeout).WithPollInterval(250*time.Millisecond)))
	ctr, err := tcmysql.Run(ctx, image, opts...)
	if err != nil {
		if ctr != nil {
			_ = testcontainers.TerminateContainer(ctr)
		}
		return server{source: source, err: fmt.Errorf("start container (set %s to use another server): %w", EnvMySQLDSN, err)}
	}
	h, err := ctr.Host(ctx)
	if err != nil {
		_ = testcontainers.TerminateContainer(ctr)
		return server{source: source, err: err}
	}
	port, err := ctr.MappedPort(ctx, mysqlPort)
	if err != nil {
		_ = testcontainers.TerminateContainer(ctr)
		return server{source: source, err: err}
	}
	s := connect(source, dsnAt(h, port))
	if s.err != nil {
		_ = testcontainers.TerminateContainer(ctr)
		return s
	}
	s.ctr = ctr
	return s
}

// localEngine reports whether DOCKER_HOST (dockerHost) names an engine
// on this machine: unset, or a Unix socket.
func localEngine(dockerHost string) bool {
	return dockerHost == "" || strings.HasPrefix(dockerHost, "unix://")
}

// mysqlPort is the container's MySQL port; xPort is MySQL's X protocol,
// which the mysql module publishes too.
const (
	mysqlPort = "3306/tcp"
	xPort     = "33060/tcp"
)

// onLoopback publishes the module's ports on 127.0.0.1 alone, on ports
// the engine picks.
func onLoopback(hc *container.HostConfig) {
	hc.PublishAllPorts = false
	loopback := []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "0"}}
	hc.PortBindings = network.PortMap{
		network.MustParsePort(mysqlPort): loopback,
		network.MustParsePort(xPort):     loopback,
	}
}
