package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/borg-memory/borg/memfs/fsutil"
)

// SessionState is borg's own memory of one agent session, kept on this
// machine only (the store's .borg/sessions/, never committed). It is what
// makes "block once per turn" hold even when an agent sends
// stop_hook_active=false on every stop.
type SessionState struct {
	Session  string `json:"session"`            // hashed id
	Engineer string `json:"engineer,omitempty"` // hashed id of who works in it
	// EngineerKnown: the engineer was resolved (Engineer may be "": none).
	EngineerKnown bool   `json:"engineer_known,omitempty"`
	Repo          string `json:"repo,omitempty"`
	CWD           string `json:"cwd,omitempty"`
	StartRef      string `json:"start_ref,omitempty"` // the work tree at session start (commit or stash-create id)
	// StartUntracked records the untracked files at session start (they
	// are not the session's work).
	StartUntracked Untracked `json:"start_untracked,omitempty"`
	StartedMS      int64     `json:"started_ms,omitempty"`
	Recorded       bool      `json:"recorded,omitempty"` // the session event is in the log

	Turn        int      `json:"turn"`         // user prompts seen
	Prompts     []string `json:"prompts"`      // the last few prompts, for the Stop query
	Blocks      int      `json:"blocks"`       // blocks this session
	BlockedTurn int      `json:"blocked_turn"` // turn of the last block; -1 for none

	// The open ask, judged at the next stop.
	Asked   []string `json:"asked,omitempty"`
	Placebo string   `json:"placebo,omitempty"`
	AskMS   int64    `json:"ask_ms,omitempty"`
	AskRef  string   `json:"ask_ref,omitempty"`  // the work tree at the ask (for an external judge)
	AskDiff string   `json:"ask_diff,omitempty"` // the session's diff at the ask (for the word rule)
	// AskUntracked records the untracked files at the ask (for an external
	// judge, whose work is the diff since AskRef).
	AskUntracked Untracked `json:"ask_untracked,omitempty"`
	Pending      bool      `json:"pending,omitempty"`
	// Deferred is an ask picked at a stop and not yet delivered: it goes
	// out with the next prompt (Config.AskAtPrompt, or an agent that
	// cannot go on after a stop).
	Deferred *DeferredAsk      `json:"deferred,omitempty"`
	EverAsk  []string          `json:"ever_asked,omitempty"`
	Verdicts map[string]string `json:"verdicts,omitempty"` // lesson → recorded result kind
	Tested   map[string]bool   `json:"tested,omitempty"`
	Early    map[string]bool   `json:"early,omitempty"` // lessons delivered early
	// EarlyWords are an early lesson's distinctive words already in the
	// work when it was delivered (absent: none).
	EarlyWords map[string][]string `json:"early_words,omitempty"`

	LastTool string `json:"last_tool,omitempty"`
	// Passed holds the "source\x00destination" tool pairs the session has
	// written a passing for.
	Passed        map[string]bool `json:"passed,omitempty"`
	LastToolPaths []string        `json:"last_tool_paths,omitempty"`
	// LastToolV is the last tool's version (toolVersion).
	LastToolV string `json:"last_tool_v,omitempty"`
	// LastActed and LastActedV are the lesson the session last acted on
	// and its version, the source of the next lesson → lesson passing.
	LastActed  string `json:"last_acted,omitempty"`
	LastActedV string `json:"last_acted_v,omitempty"`
}

// DeferredAsk is an ask waiting for the next prompt.
type DeferredAsk struct {
	Asked   []string `json:"asked"`
	Placebo string   `json:"placebo,omitempty"`
	Reason  string   `json:"reason"`
}

// maxPrompts bounds the prompts kept for the Stop query.
const maxPrompts = 8

func newSessionState(session string) *SessionState {
	return &SessionState{Session: session, BlockedTurn: -1}
}

// StateStore keeps session states under dir (the store's .borg/sessions).
type StateStore struct{ Dir string }

func (s StateStore) path(session string) string {
	return filepath.Join(s.Dir, session+".json")
}

// Update loads a session's state under an exclusive lock, lets fn change it,
// and writes it back atomically. Parallel hooks of one session (PostToolUse
// runs concurrently for parallel tool calls) serialise here; the lock waits
// at most until deadline.
func (s StateStore) Update(session string, deadline time.Time, fn func(st *SessionState) error) error {
	// A session's state holds the user's work (its diff, the text of new
	// files): the user's own to read.
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", s.Dir, err)
	}
	wait := time.Until(deadline)
	if wait < 0 {
		wait = 0
	}
	unlock, err := fsutil.LockPath(s.path(session)+".lock", wait)
	if errors.Is(err, fsutil.ErrLocked) {
		return errors.New("session state is locked by another hook")
	}
	if err != nil {
		return fmt.Errorf("lock session state: %w", err)
	}
	defer unlock()

	st, err := s.Load(session)
	if err != nil {
		return err
	}
	if err := fn(st); err != nil {
		return err
	}
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode session state: %w", err)
	}
	// Not synced: the hooks write it at every turn, and a power cut that
	// loses the last write leaves the state before it (or, torn, a fresh
	// session: Load), never a hook that fails.
	return writeFileAtomic(s.path(session), data, 0o600, fsutil.NoSync())
}

// Load reads a session's state; a missing or unreadable file is a fresh
// session (a corrupt state file must not wedge the hook).
func (s StateStore) Load(session string) (*SessionState, error) {
	data, err := os.ReadFile(s.path(session))
	if errors.Is(err, os.ErrNotExist) {
		return newSessionState(session), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session state: %w", err)
	}
	st := newSessionState(session)
	if json.Unmarshal(data, st) != nil {
		return newSessionState(session), nil
	}
	return st, nil
}

func (st *SessionState) addPrompt(p string) {
	if len(p) > 4000 {
		p = p[:4000]
	}
	st.Prompts = append(st.Prompts, p)
	if len(st.Prompts) > maxPrompts {
		st.Prompts = st.Prompts[len(st.Prompts)-maxPrompts:]
	}
}
