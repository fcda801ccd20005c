# shellcheck shell=bash
# The runbook script's shell functions.  migcheck/report/runbook.py embeds this file in
# every script it writes, after the variables it sets there (BOOTSTRAP, COMMAND_CONFIG,
# PROTOCOL, WORKDIR, RUNBOOK_ID); these header lines, up to the first empty
# line, are left out.  The steps name the functions through migcheck/model/runbook.py's
# ShellCheck and ShellHelper, and tests/unit/test_runbook.py keeps the two in step.

EXECUTE=0
YES=0
for arg in "$@"; do
  case "$arg" in
    --execute) EXECUTE=1 ;;
    --yes) YES=1 ;;
    *) echo "usage: $0 [--execute] [--yes]" >&2; exit 2 ;;
  esac
done
if [ "$EXECUTE" = 1 ]; then
  mkdir -p "$WORKDIR"
  if [ ! -f "$WORKDIR/runbook.id" ]; then
    printf '%s\n' "$RUNBOOK_ID" > "$WORKDIR/runbook.id"
  elif [ "$(cat "$WORKDIR/runbook.id")" != "$RUNBOOK_ID" ]; then
    echo "$WORKDIR holds the progress of another change ($(cat "$WORKDIR/runbook.id")):" \
      "move it away or set MIGCHECK_RUNBOOK_DIR" >&2
    exit 1
  fi
fi

say() { printf '%s\n' "$*"; }

# Without --execute the script only prints the steps: it says so first and last, so that
# no one takes its output for a change that happened.
DRY_RUN_LINE="DRY RUN: nothing was changed. Run it again with --execute to make the change."
if [ "$EXECUTE" != 1 ]; then say "$DRY_RUN_LINE"; fi
# The last line: "Runbook complete." only after a run that executed every step.
finish() {
  say ''
  if [ "$EXECUTE" = 1 ]; then say 'Runbook complete.'; else say "$DRY_RUN_LINE"; fi
}
step() { say ''; say "== Step $1: $2"; }
# A command as it runs, quoted only where the shell needs it.
show() {
  local out='  $' a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then out+=" $a"; else out+=" ${a@Q}"; fi
  done
  say "$out"
}

# Kafka's tools: $MIGCHECK_KAFKA_TOOL NAME ARGS..., $KAFKA_HOME/bin/NAME.sh, NAME.sh, NAME.
kafka_tool() {
  local name=$1
  shift
  if [ -n "${MIGCHECK_KAFKA_TOOL:-}" ]; then
    local -a tool
    read -r -a tool <<< "$MIGCHECK_KAFKA_TOOL"
    "${tool[@]}" "$name" "$@"
  elif [ -n "${KAFKA_HOME:-}" ]; then
    "$KAFKA_HOME/bin/$name.sh" "$@"
  elif command -v "$name.sh" > /dev/null 2>&1; then
    "$name.sh" "$@"
  else
    "$name" "$@"
  fi
}

# Client settings stay in the --command-config file; only its path is passed on.
config_args() {
  if [ -n "$COMMAND_CONFIG" ]; then printf '%s\n' "$1" "$COMMAND_CONFIG"; fi
}

run() {
  show "$@"
  if [ "$EXECUTE" = 1 ]; then "$@"; fi
}

# A migcheck command that asks at manual steps of its own (migrate): the script's --yes
# answers them too.
answering() {
  if [ "$YES" = 1 ]; then "$@" --yes; else "$@"; fi
}

# The state's move (migcheck copy of a changelog), before the alter: a copy that refuses
# (no partitioner placed every record: a custom StreamPartitioner) or fails stops the
# script in one FAILED line, with the input still at its count and the old app's
# changelogs, group and offsets untouched.
moving() {
  "$@" || fail "the state was not moved (migcheck copy ended with code $?, saying why above);" \
    "nothing was altered: run the script again to resume the move, or restart the app as it" \
    "was (its application.id and offsets) and resume the producers"
}

manual() {
  say "  MANUAL: $1"
  if [ "$EXECUTE" = 1 ] && [ "$YES" != 1 ]; then
    local answer=""
    read -r answer || true
    if [ "$answer" != y ]; then
      say "  stopped at a manual step; run the script again to go on" >&2
      exit 1
    fi
  fi
}

check() {
  local name=$1
  shift
  say "  CHECK: $name $*"
  if [ "$EXECUTE" = 1 ]; then "$name" "$@"; fi
}

# A read-only check that runs in a dry run too, so that the dry run says what it would
# stop on (the function itself says and decides; it stops only with --execute).
probe() {
  local name=$1
  shift
  say "  CHECK: $name $*"
  "$name" "$@"
}

already_done() { [ "$EXECUTE" = 1 ] && [ -f "$WORKDIR/$1.done" ]; }
mark_done() { if [ "$EXECUTE" = 1 ]; then : > "$WORKDIR/$1.done"; fi; }
fail() { say "  FAILED: $*" >&2; exit 1; }

topics_tool() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  kafka_tool kafka-topics --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "$@"
}

# The partition count of a topic, or nothing when it does not exist.
partition_count() {
  { topics_tool --describe --topic "$1" 2> /dev/null || true; } \
    | sed -n 's/.*PartitionCount: *\([0-9]*\).*/\1/p' | head -n 1
}

# Whether every source named still holds its whole history: log start offset 0 on each
# of its partitions (migcheck/model/history.py says why).  A source that lost records, or
# one whose offsets cannot be read, stops the script: it cannot tell, so it does not go
# on.  In a dry run it says what it would stop on.  $1 "accepted" (the runbook was written
# with --accept-lost-history) goes on past a trimmed source, saying so on its own line.
history_intact() {
  local accepted=$1
  shift
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  local out topic seen t p o lost="" unread="" why="" errors=/dev/null
  # The tool's own error says why it could not read, with --execute; a dry run on a host
  # without Kafka's tools says only what it would stop on.
  if [ "$EXECUTE" = 1 ]; then errors=/dev/stderr; fi
  # Lines "topic:partition:offset" (--time -2: the earliest offset, the log start).  Read
  # with bash alone: the dry run runs this too, on any host that has the script.
  out=$(kafka_tool kafka-get-offsets --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" \
    --topic-partitions "$(IFS=,; printf '%s' "$*")" --time -2 2> "$errors") || out=""
  for topic in "$@"; do
    seen=0
    while IFS=: read -r t p o; do
      [ "$t" = "$topic" ] && [ -n "$o" ] || continue
      seen=1
      [ "$o" = 0 ] || lost+=" $t partition $p from offset $o;"
    done <<< "$out"
    [ "$seen" = 1 ] || unread+=" $topic"
  done
  if [ -z "$unread$lost" ]; then
    say "  every source holds its whole history (log start offset 0): $*"
    return
  fi
  if [ -z "$unread" ] && [ "$accepted" = accepted ]; then
    say "  ACCEPTED (--accept-lost-history): the reprocess goes on without the records" \
      "retention deleted:${lost%;}"
    return
  fi
  if [ -n "$unread" ]; then
    why="cannot read the log start offsets of$unread (check the cluster, and Kafka's tools:"
    why+=" MIGCHECK_KAFKA_TOOL or KAFKA_HOME)"
  fi
  if [ -n "$lost" ]; then
    why+="${why:+; }the sources no longer hold their whole history:${lost%;}: a reprocess"
    why+=" would rebuild the state without those records; keep the whole history, or write"
    why+=" the runbook again with --accept-lost-history"
  fi
  if [ "$EXECUTE" != 1 ]; then
    say "  WOULD STOP (with --execute): $why"
    return
  fi
  fail "$why"
}

record_offsets() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  kafka_tool kafka-get-offsets --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" \
    --topic "$1" --time -1 > "$WORKDIR/$2"
  say "  recorded in $WORKDIR/$2"
}

# "topic,partition,offset" lines: the group $1's committed offsets, from its description
# on stdin (kafka-consumer-groups --describe --offsets), sorted.
committed_csv() {
  G=$1 awk "$(awk_group_fields)"'
    group_fields() && f[2] ~ /^[0-9]+$/ && f[3] ~ /^[0-9]+$/ { print f[1] "," f[2] "," f[3] }' \
    | sort
}

# The group $1's committed offsets on the topics after $1, as committed_csv prints them.
# kafka-consumer-groups lists them; kafka-streams-groups (PROTOCOL=streams, Kafka 4.3) lists
# only the partitions of its members' tasks, none once the app has stopped, and without
# --verbose their lag where the offset would be: a stopped streams group's are read with
# --reset-offsets --to-current --dry-run, which commits nothing and answers only while the
# group has no members (FINDINGS.md, "Committing a new streams group's offsets").
group_offsets() {
  local group=$1 topic
  shift
  if [ "$PROTOCOL" != streams ]; then
    { group_tool --describe --group "$group" --offsets 2> /dev/null || true; } \
      | committed_csv "$group"
    return
  fi
  {
    group_tool --describe --group "$group" --offsets --verbose 2> /dev/null || true
    for topic in "$@"; do
      group_tool --reset-offsets --group "$group" --input-topic "$topic" --to-current \
        --dry-run 2> /dev/null || true
    done
  } | committed_csv "$group" | sort -u
}

# The offset of the topic $1's partition $2 in committed_csv's lines on stdin; none if absent.
csv_offset() {
  awk -F, -v t="$1" -v p="$2" '$1 == t && $2 == p { print $3 }'
}

# The offsets of each partition of the topic $1 at the time $2 (-1 its end, -2 its log
# start), as "partition offset" lines.
topic_offsets() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  kafka_tool kafka-get-offsets --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" --topic "$1" \
    --time "$2" | awk -F: -v t="$1" '$1 == t { print $2, $3 }'
}

# The barrier of an app that drained and stopped (--strategy move-state): the group $1's
# committed offset on each partition of each source topic after $2, written to
# $WORKDIR/$2 as "topic,partition,offset" lines (what kafka-consumer-groups --reset-offsets
# --from-file reads).  Each must be the partition's end: the app processed every record
# before it stopped, so its changelogs hold the state of them all, and the app restarted
# from the barrier reads on from there.  A partition without a committed offset passes only
# when it holds no record (its log start is its end).
record_barrier() {
  local group=$1 file=$2 topic committed p end start at
  shift 2
  committed=$(group_offsets "$group" "$@")
  : > "$WORKDIR/$file.tmp"
  for topic in "$@"; do
    declare -A starts=()
    while read -r p start; do starts[$p]=$start; done < <(topic_offsets "$topic" -2)
    while read -r p end; do
      at=$(csv_offset "$topic" "$p" <<< "$committed")
      if [ -z "$at" ]; then
        [ "${starts[$p]:-}" = "$end" ] || fail "$group has no committed offset on $topic" \
          "partition $p, which holds records up to offset $end: let the app drain to lag 0"
      elif [ "$at" != "$end" ]; then
        fail "$group committed offset $at on $topic partition $p, not its end $end: the app" \
          "stopped before it processed every record; start it, let it drain to lag 0, stop it"
      fi
      printf '%s,%s,%s\n' "$topic" "$p" "$end" >> "$WORKDIR/$file.tmp"
    done < <(topic_offsets "$topic" -1)
    unset starts
  done
  [ -s "$WORKDIR/$file.tmp" ] || fail "no offsets read for $*: check the cluster"
  mv "$WORKDIR/$file.tmp" "$WORKDIR/$file"
  say "  $group stopped at the end of every partition of $*: recorded in $WORKDIR/$file"
}

# The barrier of a state moved onto a copy (--strategy move-state --into): the barrier
# $WORKDIR/$1 (record_barrier's) with the rows of the input $2 replaced by each of the $4
# partitions of its copy $3 at its end, written to $WORKDIR/$5 for commit_barrier.  Read
# once the copy has finished and before the producers switch to $3: the copy then holds
# every record of $2 up to the barrier, and each record after its ends is a new one.
record_copy_barrier() {
  local barrier=$1 topic=$2 into=$3 count=$4 file=$5 p end n=0
  [ -f "$WORKDIR/$barrier" ] || fail "no barrier recorded in $WORKDIR/$barrier"
  T=$topic awk -F, '$1 != ENVIRON["T"]' "$WORKDIR/$barrier" > "$WORKDIR/$file.tmp"
  while read -r p end; do
    printf '%s,%s,%s\n' "$into" "$p" "$end" >> "$WORKDIR/$file.tmp"
    n=$((n + 1))
  done < <(topic_offsets "$into" -1)
  [ "$n" = "$count" ] || fail "read the end offsets of $n partitions of $into, not $count:" \
    "check the cluster"
  mv "$WORKDIR/$file.tmp" "$WORKDIR/$file"
  say "  the copy $into ends where the barrier of $topic is: recorded in $WORKDIR/$file"
}

# Commits the barrier $WORKDIR/$2 (record_barrier's) for the group $1, a new application
# id's that has not run, with the partitions of the altered topic $3 beyond the barrier's up
# to $4 at offset 0 (the producers wrote there only after the alter; a copy's barrier,
# record_copy_barrier's, names every partition of its $3 already); then reads every
# offset back.  kafka-consumer-groups --reset-offsets --from-file, never the streams reset
# tool, which would delete internal topics; for a streams-protocol app too, whose new id is
# a classic group until its first member's join converts it, keeping the offsets.  Kafka
# allows it only while the group has no members; a re-run commits the same offsets again.
commit_barrier() {
  local group=$1 file=$2 count=$3 plan="$WORKDIR/$2.commit" topic old p out wrong added=""
  local -a cfg reset
  shift 3
  mapfile -t cfg < <(config_args --command-config)
  [ -f "$WORKDIR/$file" ] || fail "no barrier recorded in $WORKDIR/$file"
  cp "$WORKDIR/$file" "$plan"
  for topic in "$@"; do  # each widened topic's new partitions from 0
    old=$(awk -F, -v t="$topic" '$1 == t { n++ } END { print n + 0 }' "$WORKDIR/$file")
    for ((p = old; p < count; p++)); do printf '%s,%s,0\n' "$topic" "$p" >> "$plan"; done
    ((old < count)) && added+="${added:+, }partitions $old-$((count - 1)) of $topic"
  done
  [ "$(group_members "$group")" = 0 ] || fail "the group $group has members: stop them;" \
    "its offsets are committed before it first starts"
  reset=(--reset-offsets --group "$group" --from-file "$plan" --execute)
  show kafka-consumer-groups --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "${reset[@]}"
  out=$(consumer_groups "${reset[@]}" 2>&1) || fail "kafka-consumer-groups --reset-offsets failed:" \
    "$(grep -v '^[[:space:]]*$' <<< "$out" | tail -n 1)"
  while IFS= read -r p; do [ -z "$p" ] || say "    $p"; done <<< "$out"
  wrong=$(comm -23 <(sort "$plan") \
    <({ consumer_groups --describe --group "$group" --offsets 2> /dev/null || true; } \
      | committed_csv "$group") | tr '\n' ' ')
  [ -z "$wrong" ] || fail "$group does not hold these offsets (topic,partition,offset): $wrong"
  [ -n "$added" ] || { say "  $group holds the barrier on every partition"; return; }
  say "  $group holds the barrier on every partition, and offset 0 on $added"
}

group_tool() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  if [ "$PROTOCOL" = streams ]; then
    kafka_tool kafka-streams-groups --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "$@"
  else
    consumer_groups "$@"
  fi
}

# kafka-consumer-groups, whatever the protocol: the group_tool of a classic group, and the
# tool of a new application id's offsets before its first member joins (commit_barrier).
consumer_groups() {
  local -a cfg
  mapfile -t cfg < <(config_args --command-config)
  kafka_tool kafka-consumer-groups --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "$@"
}

# Waits up to $1 seconds for the group $2 to have no members.  A Kafka Streams member of a
# classic group does not leave it on close(): the broker drops it only when its
# session.timeout.ms (45 s by default) runs out, so a properly stopped app still shows
# members for a while.  Only members that outlast the wait are refused.
group_is_empty() {
  local timeout=$1 group=$2 out started=$SECONDS said=0
  while :; do
    # --state, not --members: kafka-streams-groups --members prints nothing at all for an
    # empty group; both tools say "has no active members" with --state.  A group that is
    # gone (deleted, or its offsets expired) is "Group <group> not found" (FINDINGS.md,
    # Kafka 4.3.1; older tools said "does not exist").
    out=$(group_tool --describe --group "$group" --state 2>&1 || true)
    if grep -Eq 'has no active members|GroupIdNotFoundException: Group .* not found|does not exist' \
      <<< "$out"; then
      say "  the group $group has no members"
      return
    fi
    if ((SECONDS - started >= timeout)); then
      fail "the group $group still has members; stop every instance first" \
        "(waited $timeout s, --group-timeout)"
    fi
    if [ "$said" = 0 ]; then
      say "  the group $group still has members: waiting up to $timeout s (--group-timeout)" \
        "for a stopped instance's session to time out"
      said=1
    fi
    sleep 2
  done
}

ensure_topic() {
  local topic=$1 count=$2 like=$3
  shift 3
  local now
  now=$(partition_count "$topic")
  if [ -n "$now" ]; then
    [ "$now" = "$count" ] || fail "$topic exists with $now partitions, not $count"
    say "  $topic exists with $count partitions"
    return
  fi
  local rf
  rf=$(topics_tool --describe --topic "$like" \
    | sed -n 's/.*ReplicationFactor: *\([0-9]*\).*/\1/p' | head -n 1)
  local -a configs=()
  local c
  for c in "$@"; do configs+=(--config "$c"); done
  topics_tool --create --topic "$topic" --partitions "$count" \
    --replication-factor "${rf:-1}" "${configs[@]}"
  # CreateTopics answers once the controller has the topic; the brokers' metadata lists it
  # a moment later (seconds on a loaded or larger cluster), and the next step (the copy)
  # looks for it there.
  local tries
  for tries in $(seq 1 60); do
    [ "$(partition_count "$topic")" = "$count" ] && return
    [ "$tries" -lt 60 ] && sleep 1
  done
  fail "$topic was created, but the cluster's metadata did not list its $count partitions within 60 s"
}

ensure_partitions() {
  local now
  now=$(partition_count "$1")
  [ -n "$now" ] || fail "$1 does not exist"
  if [ "$now" = "$2" ]; then
    say "  $1 has $2 partitions"
  else
    topics_tool --alter --topic "$1" --partitions "$2"
  fi
}

wait_internal_topics() {
  local pair topic count now tries
  for pair in "$@"; do
    topic=${pair%=*}
    count=${pair##*=}
    for tries in $(seq 1 120); do
      now=$(partition_count "$topic")
      [ "$now" = "$count" ] && break
      [ -z "$now" ] || fail "$topic has $now partitions, not $count"
      [ "$tries" -lt 120 ] || fail "$topic did not come back within 240 s"
      sleep 2
    done
    say "  $topic: $count partitions"
  done
}

# kafka-consumer-groups prints a group's id first on each of its rows, and an id may hold
# spaces: the awk programs below take the fields after it (group_fields(), into the array f),
# the id from the environment (awk -v would read its backslashes as escapes).
awk_group_fields() {
  cat << 'AWK'
function group_fields(   g) { g = ENVIRON["G"]
  return index($0, g " ") == 1 ? split(substr($0, length(g) + 1), f) : 0 }
AWK
}

# The lag of the group $2 on the topic $1, summed over its partitions: "unknown" when the
# group commits no offsets for it; a partition without a committed offset counts 1.
group_lag() {
  if [ "$PROTOCOL" = streams ]; then
    streams_lag "$@"
    return
  fi
  { group_tool --describe --group "$2" --offsets 2> /dev/null || true; } \
    | G=$2 awk -v t="$1" "$(awk_group_fields)"'
        group_fields() && f[1] == t { n++; if (f[5] ~ /^[0-9]+$/) s += f[5]; else s += 1 }
        END { if (n == 0) print "unknown"; else print s }'
}

# group_lag of a streams group: the records of each partition after its committed offset,
# or after its log start where it has none; kafka-streams-groups prints no lag once the app
# has stopped, and none but with --verbose while it runs (group_offsets).
streams_lag() {
  local topic=$1 committed p start end at lag=0 n=0
  local -A starts=()
  committed=$(group_offsets "$2" "$topic")
  while read -r p start; do starts[$p]=$start; done < <(topic_offsets "$topic" -2)
  while read -r p end; do
    at=$(csv_offset "$topic" "$p" <<< "$committed")
    [ -z "$at" ] || n=$((n + 1))
    lag=$((lag + end - ${at:-${starts[$p]:-$end}}))
  done < <(topic_offsets "$topic" -1)
  if [ "$n" = 0 ]; then echo unknown; else echo "$lag"; fi
}

# The number of members of the group $1: 0 when it has none or does not exist.
group_members() {
  { group_tool --describe --group "$1" --members 2> /dev/null || true; } \
    | G=$1 awk "$(awk_group_fields)"' group_fields() { n++ } END { print n + 0 }'
}

# Prints the members and lag on the topic $1 of each group named after the file $2, and
# records the groups' descriptions (offsets, lag, owners) in $WORKDIR/$2.
groups_lag() {
  local topic=$1 file=$2 group
  shift 2
  : > "$WORKDIR/$file"
  for group in "$@"; do
    say "  $group: members $(group_members "$group"), lag $(group_lag "$topic" "$group") on $topic"
    group_tool --describe --group "$group" >> "$WORKDIR/$file" 2>&1 || true
  done
  say "  recorded in $WORKDIR/$file"
}

# Waits up to $1 seconds until every group named after the topic $2 has lag 0 on it.
# A group with lag and no members never drains: the wait says so, and so does its failure.
wait_lag_zero() {
  local timeout=$1 topic=$2 group lag started=$SECONDS said
  shift 2
  for group in "$@"; do
    said=0
    while :; do
      lag=$(group_lag "$topic" "$group")
      if [ "$lag" = 0 ]; then
        say "  lag of $group on $topic: 0"
        break
      fi
      if [ "$said" = 0 ] && [ "$(group_members "$group")" = 0 ]; then
        say "  $group has lag $lag on $topic and no members: it drains only once started"
      fi
      said=1
      if ((SECONDS - started >= timeout)); then
        [ "$(group_members "$group")" != 0 ] \
          || fail "$group has lag $lag on $topic and no members after $timeout s" \
            "(--lag-timeout): start its consumers; a group with no members never drains"
        fail "the lag of $group on $topic is still $lag after $timeout s (--lag-timeout)"
      fi
      sleep 2
    done
  done
}

# Fails unless the topic $1 has exactly $2 partitions.
topic_partitions() {
  local now
  now=$(partition_count "$1")
  [ -n "$now" ] || fail "$1 does not exist"
  [ "$now" = "$2" ] || fail "$1 has $now partitions, not $2"
  say "  $1 has $2 partitions"
}

# How many of the partitions 0..$3-1 of the topic $2 the group $1 has assigned: rows of
# kafka-consumer-groups --describe with a CONSUMER-ID, listed with or without an offset.
assigned_count() {
  { group_tool --describe --group "$1" 2> /dev/null || true; } \
    | G=$1 awk -v t="$2" -v n="$3" "$(awk_group_fields)"'
        group_fields() && f[1] == t && f[2] ~ /^[0-9]+$/ && f[2] < n && f[6] != "-" \
          && !seen[f[2]]++ { k++ }
        END { print k + 0 }'
}

# Waits up to $1 seconds until every group named after the topic $2 and its count $3
# that has members owns all $3 partitions: a consumer sees new partitions only at its
# next metadata refresh (metadata.max.age.ms).  A group without members (now, or when
# its last member leaves during the wait) is named and passed over: ensure_offsets, the
# next step's check, commits its offsets on the new partitions.
wait_assigned() {
  local timeout=$1 topic=$2 count=$3 group owned started=$SECONDS
  shift 3
  for group in "$@"; do
    while :; do
      owned=$(assigned_count "$group" "$topic" "$count")
      if [ "$owned" = "$count" ]; then
        say "  $group owns all $count partitions of $topic"
        break
      fi
      if [ "$owned" = 0 ] && [ "$(group_members "$group")" = 0 ]; then
        say "  $group has no members: the next step commits its offsets on the new" \
          "partitions of $topic"
        break
      fi
      ((SECONDS - started < timeout)) \
        || fail "$group owns $owned of the $count partitions of $topic after $timeout s" \
          "(--assign-timeout): is its metadata.max.age.ms longer?"
      sleep 2
    done
  done
}

# The partitions $3..$4-1 of the topic $2 on which the group $1 has no committed offset,
# comma-separated: nothing when it has one on each.  kafka-consumer-groups lists a
# partition a member owns without an offset with CURRENT-OFFSET "-", and leaves out one
# that no member owns and no offset names.
missing_offsets() {
  { group_tool --describe --group "$1" --offsets 2> /dev/null || true; } \
    | G=$1 awk -v t="$2" -v from="$3" -v n="$4" "$(awk_group_fields)"'
        group_fields() && f[1] == t && f[2] ~ /^[0-9]+$/ && f[3] ~ /^[0-9]+$/ { have[f[2] + 0] = 1 }
        END { for (p = from; p < n; p++) if (!(p in have)) { out = out sep p; sep = "," }
              print out }'
}

# Makes the group $6 hold a committed offset on each new partition $3..$4-1 of the topic
# $2 before the producers resume: a consumer meeting a partition without one starts at
# its auto.offset.reset, latest by default, and skips what the producers write there
# first.  With no members (decided now, not when the runbook was written), it commits
# the start of each partition that lacks one with kafka-consumer-groups --reset-offsets
# --to-earliest (Kafka allows that only while the group is empty; the producers are
# paused, so the start is offset 0), then checks it.  With members, it waits up to $1
# seconds for them to commit (auto-commit does within auto.commit.interval.ms); if they
# do not, it fails with the choice, unless $5 is "accepted" (--accept-loss-risk): then
# it says so and goes on.  The group id is only ever an argument, never code.
ensure_offsets() {
  local timeout=$1 topic=$2 from=$3 count=$4 mode=$5 group=$6 started=$SECONDS
  local missing members out line why="" said=0
  local -a cfg reset
  mapfile -t cfg < <(config_args --command-config)
  while :; do
    missing=$(missing_offsets "$group" "$topic" "$from" "$count")
    if [ -z "$missing" ]; then
      say "  $group holds an offset on every new partition of $topic"
      return
    fi
    members=$(group_members "$group")
    if [ "$members" = 0 ]; then
      say "  $group has no members and no offset on partitions $missing of $topic:" \
        "committing their start"
      reset=(--reset-offsets --group "$group" --topic "$topic:$missing" --to-earliest --execute)
      show kafka-consumer-groups --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "${reset[@]}"
      if out=$(group_tool "${reset[@]}" 2>&1); then
        while IFS= read -r line; do [ -z "$line" ] || say "    $line"; done <<< "$out"
        missing=$(missing_offsets "$group" "$topic" "$from" "$count")
        if [ -z "$missing" ]; then
          say "  $group holds an offset on every new partition of $topic (committed)"
          return
        fi
        why="partitions $missing still have no offset after the reset"
      else
        why="kafka-consumer-groups --reset-offsets failed: $(grep -v '^[[:space:]]*$' <<< "$out" \
          | tail -n 1)"
      fi
      say "  $why"
    elif [ "$said" = 0 ]; then
      say "  $group has members and no offset yet on partitions $missing of $topic:" \
        "waiting up to $timeout s (--commit-timeout) for them to commit"
      said=1
    fi
    if ((SECONDS - started >= timeout)); then
      if [ "$members" = 0 ]; then
        fail "could not commit $group's offsets on partitions $missing of $topic: $why"
      elif [ "$mode" = accepted ]; then
        say "  $group: no offset on partitions $missing of $topic after $timeout s; its risk" \
          "is accepted (--accept-loss-risk): it reads them as its auto.offset.reset says"
        return
      fi
      fail "$group has members but no offset on partitions $missing of $topic after" \
        "$timeout s (--commit-timeout): with auto.offset.reset=latest they would skip the" \
        "records written there first; stop its consumers and run the runbook again (it then" \
        "commits the offsets itself), or accept the risk (--accept-loss-risk $group)"
    fi
    sleep 2
  done
}

# Makes the plain group $1, stopped, hold the end of every partition of the copy $2 (its
# $3 partitions): the producers are paused, the group has read the old topic to its end
# and the copy holds every record of it, so the copy's end is where the group stands; its
# consumers, started on the copy, read on from the first record written after the switch.
# Kafka allows the commit only while the group has no members.  A group that already holds
# an offset on every partition of $2 (a re-run, after the producers may have written there)
# keeps it.  The group id is only ever an argument, never code.
commit_at_end() {
  local group=$1 topic=$2 count=$3 missing out line
  local -a cfg reset
  mapfile -t cfg < <(config_args --command-config)
  missing=$(missing_offsets "$group" "$topic" 0 "$count")
  if [ -z "$missing" ]; then
    say "  $group holds an offset on every partition of $topic"
    return
  fi
  [ "$(group_members "$group")" = 0 ] || fail "the group $group has members: stop its" \
    "consumers; its offsets on $topic are committed while it has none"
  reset=(--reset-offsets --group "$group" --topic "$topic" --to-latest --execute)
  show kafka-consumer-groups --bootstrap-server "$BOOTSTRAP" "${cfg[@]}" "${reset[@]}"
  out=$(consumer_groups "${reset[@]}" 2>&1) || fail "kafka-consumer-groups --reset-offsets" \
    "failed: $(grep -v '^[[:space:]]*$' <<< "$out" | tail -n 1)"
  while IFS= read -r line; do [ -z "$line" ] || say "    $line"; done <<< "$out"
  missing=$(missing_offsets "$group" "$topic" 0 "$count")
  [ -z "$missing" ] || fail "$group has no offset on partitions $missing of $topic after the reset"
  say "  $group holds the end of every partition of $topic"
}

# The flag kafka-streams-application-reset takes the --command-config file with, in
# RESET_CONFIG_FLAG: --command-config where the installed tool's --help lists it (Kafka
# 4.2 on, which deprecates --config-file), else --config-file (3.x to 4.1 know only that).
# Asked once per run; a tool that cannot say gets --config-file, which 3.6 to 4.3 accept.
RESET_CONFIG_FLAG=""
reset_config_flag() {
  [ -z "$RESET_CONFIG_FLAG" ] || return 0
  local help
  help=$(kafka_tool kafka-streams-application-reset --help 2>&1 || true)  # exits 1 after it
  if grep -Eq '^(\* )?--command-config[[:space:]]' <<< "$help"; then
    RESET_CONFIG_FLAG=--command-config
  else
    RESET_CONFIG_FLAG=--config-file
  fi
}

# The reset tool, naming only the internal topics that still exist: it refuses a topic
# that is gone, and a re-run after a reset that deleted them and then failed must go on.
# The config file goes with the flag this tool's version takes (reset_config_flag).
reset_tool() {
  local -a args=() kept=() wanted=()
  local t
  while (($#)); do
    if [ "$1" = --config-file ] || [ "$1" = --command-config ]; then
      reset_config_flag
      if [ "$RESET_CONFIG_FLAG" != "$1" ]; then
        say "  this kafka-streams-application-reset takes $RESET_CONFIG_FLAG, not $1 (its --help)"
      fi
      args+=("$RESET_CONFIG_FLAG" "$2")
      shift 2
    elif [ "$1" = --internal-topics ]; then
      IFS=, read -r -a wanted <<< "$2"
      for t in "${wanted[@]}"; do
        if [ -n "$(partition_count "$t")" ]; then kept+=("$t"); else say "  $t: deleted before"; fi
      done
      if ((${#kept[@]})); then args+=(--internal-topics "$(IFS=,; printf '%s' "${kept[*]}")"); fi
      shift 2
    else
      args+=("$1")
      shift
    fi
  done
  kafka_tool "${args[@]}"
}

# The python3 that reads migcheck's JSON: the one beside migcheck (its virtualenv's or
# pipx's), else the first on PATH.  migcheck is a Python 3 program, so where it runs, one is.
python3_path() {
  local here
  here=$(command -v migcheck || true)
  if [[ $here == /* ]]; then here=$(dirname "$(readlink -f "$here" || printf '%s' "$here")"); fi
  if [[ $here == /* ]] && [ -x "$here/python3" ]; then
    printf '%s\n' "$here/python3"
  else
    command -v python3
  fi
}

# The reasons in the "health" list of the migcheck app JSON report on stdin, one a line,
# read by the python3 $1: exit 0 when the list is empty (every internal topic matches its
# sources), 1 when it is not, 2 when stdin is no such report.
health_reasons() {
  "$1" -c '
import json, sys
try:
    health = json.load(sys.stdin)["health"]
    if not isinstance(health, list):
        raise TypeError("health is not a list")
    reasons = [str(reason["text"]) for reason in health]
except (ValueError, KeyError, TypeError) as e:
    print(f"not a migcheck app JSON report ({type(e).__name__}: {e})")
    sys.exit(2)
print("\n".join(reasons))
sys.exit(1 if reasons else 0)
'
}

# migcheck app --format json on the restarted app: healthy when it exits 0 (its verdict is
# SAFE) and its report's health list is empty.  The JSON decides, not the text's wording.
app_is_healthy() {
  local python out status=0 why
  python=$(python3_path) || fail "no python3 beside migcheck or on PATH to read its report"
  out=$(migcheck "$@") || status=$?
  [ "$status" -le 1 ] || fail "migcheck app failed (exit $status); its error is above"
  why=$(health_reasons "$python" <<< "$out") \
    || fail "migcheck app does not find the app healthy: $why"
  [ "$status" = 0 ] || fail "migcheck app exits 1: its verdict is not SAFE"
  say "  migcheck app: healthy"
}
