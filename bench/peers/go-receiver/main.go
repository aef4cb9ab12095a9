// go-receiver: the webhook receiver a Go shop would write instead of merchant-receiver, for
// bench/peers (scripts/bench-peers). Standard Webhooks v1 verification (HMAC-SHA256 over
// "id.timestamp.body" with the base64 secret, every "v1," entry compared in constant time,
// timestamp within 300 s), the body parsed with encoding/json, the event id deduplicated in SQLite
// (WAL, synchronous=NORMAL) with INSERT ... ON CONFLICT DO NOTHING. 200 for a new event and for a
// duplicate, 401 for a bad signature or timestamp, 400 for bad JSON.
//
// Two modes: plain (one INSERT, in its own implicit transaction, per request) and -group (each
// request queues its insert on a channel; one writer goroutine takes whatever is queued, at most
// 256, commits them in one transaction, then answers each).
//
// Prints "listening on 127.0.0.1:PORT" on stdout once it accepts connections.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

const tolerance = 300 // seconds either side of now

type insert struct {
	scope, id string
	done      chan error
}

type receiver struct {
	key   []byte
	db    *sql.DB
	scope string
	queue chan insert // -group only
}

// verify checks the Standard Webhooks v1 headers against body; false when anything is off.
func (r *receiver) verify(h http.Header, body []byte) (string, bool) {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return "", false
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", false
	}
	if now := time.Now().Unix(); t < now-tolerance || t > now+tolerance {
		return "", false
	}
	mac := hmac.New(sha256.New, r.key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	want := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	ok := 0
	for _, entry := range strings.Fields(sigs) {
		v, sig, found := strings.Cut(entry, ",")
		if !found || v != "v1" {
			continue
		}
		ok |= subtle.ConstantTimeCompare([]byte(sig), want)
	}
	return id, ok == 1
}

func (r *receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	id, ok := r.verify(req.Header, body)
	if !ok {
		http.Error(w, `{"error":"invalid signature"}`, http.StatusUnauthorized)
		return
	}
	var event struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &event); err != nil || event.Type == "" {
		http.Error(w, `{"error":"invalid json"}`, http.StatusBadRequest)
		return
	}
	if r.queue != nil {
		done := make(chan error, 1)
		r.queue <- insert{r.scope, id, done}
		err = <-done
	} else {
		_, err = r.db.Exec(`INSERT INTO dedup (scope, event_id, created_at) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, r.scope, id, time.Now().UnixMilli())
	}
	if err != nil {
		log.Printf("insert %s: %v", id, err)
		http.Error(w, `{"error":"storage"}`, http.StatusServiceUnavailable)
		return
	}
	// New or duplicate (the row was already there): both are 200, the handler ran once.
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"received":true}`))
}

// writer is the one goroutine that writes in -group mode: it takes what is queued (at most 256),
// commits it in one transaction, then answers each request.
func (r *receiver) writer() {
	batch := make([]insert, 0, 256)
	for first := range r.queue {
		batch = append(batch[:0], first)
	more:
		for len(batch) < 256 {
			select {
			case next := <-r.queue:
				batch = append(batch, next)
			default:
				break more
			}
		}
		err := r.commit(batch)
		for _, in := range batch {
			in.done <- err
		}
	}
}

func (r *receiver) commit(batch []insert) error {
	tx, err := r.db.Begin()
	if err != nil {
		return err
	}
	stmt, err := tx.Prepare(`INSERT INTO dedup (scope, event_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`)
	if err != nil {
		tx.Rollback()
		return err
	}
	now := time.Now().UnixMilli()
	for _, in := range batch {
		if _, err := stmt.Exec(in.scope, in.id, now); err != nil {
			stmt.Close()
			tx.Rollback()
			return err
		}
	}
	stmt.Close()
	return tx.Commit()
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	dbPath := flag.String("db", "go-receiver.db", "SQLite file")
	secret := flag.String("secret", os.Getenv("WEBHOOK_SECRET"), "whsec_... (base64)")
	group := flag.Bool("group", false, "group commit: one writer goroutine, up to 256 inserts a transaction")
	flag.Parse()

	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(*secret, "whsec_"))
	if err != nil || len(key) == 0 {
		log.Fatalf("-secret: want whsec_<base64>: %v", err)
	}
	// _txlock=immediate: a transaction takes the write lock at BEGIN (no upgrade deadlocks).
	dsn := "file:" + *dbPath + "?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_txlock=immediate"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS dedup (scope TEXT NOT NULL,
		event_id TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (scope, event_id))`); err != nil {
		log.Fatal(err)
	}
	r := &receiver{key: key, db: db, scope: "default"}
	if *group {
		db.SetMaxOpenConns(1) // only the writer uses the database
		r.queue = make(chan insert, 4096)
		go r.writer()
	} else {
		// SQLite has one writer: more connections would only wait on each other's lock (and
		// sleep in the busy handler); one connection serialises the INSERTs in Go instead.
		db.SetMaxOpenConns(1)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr().String())
	os.Stdout.Sync()
	mux := http.NewServeMux()
	mux.HandleFunc("/webhooks", r.serveHTTP)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}
