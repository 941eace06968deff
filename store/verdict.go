package store

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// judgeMySQL judges the global variables and status of a MySQL or MariaDB
// node (names in lower case).
func judgeMySQL(vars, status map[string]string) (durable bool, why string, fixes []Fix) {
	galera := strings.EqualFold(vars["wsrep_on"], "ON")
	group := vars["group_replication_group_name"] != ""
	size, _ := strconv.Atoi(status["wsrep_cluster_size"])
	cluster := galera && size > 1 || group
	var v verdict
	v.judgeFlush(vars["innodb_flush_log_at_trx_commit"], cluster)
	if galera {
		v.judgeGalera(providerOptions(vars["wsrep_provider_options"]))
	} else if on(vars["log_bin"]) {
		v.judgeBinlog(vars["sync_binlog"])
	}
	if group {
		v.judgeGroup(vars["group_replication_force_members"])
	}

	var kind string
	switch {
	case group:
		kind = "Group Replication member, group_replication_consistency=" + cmp.Or(vars["group_replication_consistency"], "(not reported)")
	case cluster:
		kind = fmt.Sprintf("Galera node, a cluster of %d", size)
	case galera:
		kind = "Galera node alone in its cluster, a single server"
	default:
		kind = "single server"
	}
	if len(v.risks) > 0 {
		return false, kind + ": " + strings.Join(v.risks, "; "), v.fixes
	}
	what := "a commit is on disk before it is acknowledged"
	if cluster {
		what = "a commit is on this node's disk before it acknowledges it"
	}
	return true, kind + ": " + strings.Join(v.fine, ", ") + ": " + what, nil
}

// verdict gathers judgeMySQL's findings: the settings that are fine, and
// the risky ones with their fixes.
type verdict struct {
	fine, risks []string
	fixes       []Fix
}

// add records a risky setting, what it risks and its fix.
func (v *verdict) add(f Fix, risk string) {
	v.fixes = append(v.fixes, f)
	v.risks = append(v.risks, fmt.Sprintf("%s=%s: %s; set %s", f.Setting, f.Value, risk, f))
}

// judgeFlush judges innodb_flush_log_at_trx_commit, on a node of a
// cluster of several or not.
func (v *verdict) judgeFlush(flush string, cluster bool) {
	fix := Fix{Setting: "innodb_flush_log_at_trx_commit", Value: flush, Want: "1"}
	switch {
	case flush == "1" || flush == "3":
		v.fine = append(v.fine, "innodb_flush_log_at_trx_commit="+flush)
	case flush == "":
		fix.Value = "(not reported)"
		v.add(fix, "whether a commit is on disk when it is acknowledged is not known")
	case cluster && (flush == "0" || flush == "2"):
		v.add(fix, "a commit survives while one node of the cluster does, not a crash or power loss of every node at once")
	case flush == "2":
		v.add(fix, "a commit survives a crash of mysqld, not of the machine (an OS crash, a power loss)")
	case flush == "0":
		v.add(fix, "up to about a second of commits is lost on any crash of mysqld")
	default:
		v.add(fix, "a value this version of leaf does not know")
	}
}

// judgeGalera judges a Galera node's provider options.
func (v *verdict) judgeGalera(opts map[string]string) {
	if on(opts["pc.ignore_sb"]) {
		v.add(Fix{Setting: "pc.ignore_sb", Value: opts["pc.ignore_sb"], Want: "false"},
			"both sides of a network split take writes, and one side's are lost when they join")
	}
	if on(opts["pc.ignore_quorum"]) {
		v.add(Fix{Setting: "pc.ignore_quorum", Value: opts["pc.ignore_quorum"], Want: "false"},
			"a part of the cluster without a majority takes writes, which are lost when it joins the rest")
	}
}

// judgeGroup judges a Group Replication member's settings:
// group_replication_force_members, set, made a minority of the group take
// writes on its own.
func (v *verdict) judgeGroup(force string) {
	if force != "" {
		v.add(Fix{Setting: "group_replication_force_members", Value: force, Want: "''"},
			"a part of the group was forced to take writes without a majority, and the rest's may be lost when they meet; clear it once the group is whole")
	}
}

// judgeBinlog judges sync_binlog where the binary log is on. The binary
// log is what a replica gets: where one may be promoted, a commit the
// binary log lost is lost with it.
func (v *verdict) judgeBinlog(sb string) {
	if sb == "1" {
		v.fine = append(v.fine, "sync_binlog=1 with the binary log on")
	} else {
		v.add(Fix{Setting: "sync_binlog", Value: sb, Want: "1"},
			"with the binary log on, a crash of the machine can take commits from it, and a replica promoted then lacks them (or turn log_bin off where no replica is ever promoted)")
	}
}

// providerOptions reads wsrep_provider_options, "key = value; key = value".
func providerOptions(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return out
}

// on reads a boolean setting as MySQL and Galera write them.
func on(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "1", "true", "yes":
		return true
	}
	return false
}

// sqliteSynchronous names PRAGMA synchronous's values.
var sqliteSynchronous = []string{"OFF", "NORMAL", "FULL", "EXTRA"}

// judgeSQLite judges a SQLite database: in memory, or a file in journal
// mode mode with PRAGMA synchronous sync.
func judgeSQLite(memory bool, mode string, sync int) (durable bool, why string, fixes []Fix) {
	if memory {
		return false, "the database is in memory: every range is forgotten when leaf stops, and ids start again; give --sqlite-path a file",
			[]Fix{{Setting: "--sqlite-path", Value: ":memory:", Want: "FILE"}}
	}
	name := strconv.Itoa(sync)
	if sync >= 0 && sync < len(sqliteSynchronous) {
		name = sqliteSynchronous[sync]
	}
	settings := fmt.Sprintf("synchronous=%s, journal_mode=%s", name, mode)
	switch {
	case mode == "off" || mode == "memory":
		return false, settings + ": a crash in the middle of a commit can corrupt the file; set journal_mode=WAL",
			[]Fix{{Setting: "journal_mode", Value: mode, Want: "WAL"}}
	case sync >= 2: // FULL, EXTRA
		return true, settings + ": a commit is on disk before it is acknowledged", nil
	case sync == 1 && mode == "wal":
		return false, settings + ": a commit survives a crash of leaf, not of the machine (an OS crash, a power loss); set synchronous=FULL",
			[]Fix{{Setting: "synchronous", Value: name, Want: "FULL"}}
	}
	return false, settings + ": a crash of the machine (an OS crash, a power loss) can lose commits or corrupt the file; set synchronous=FULL",
		[]Fix{{Setting: "synchronous", Value: name, Want: "FULL"}}
}
