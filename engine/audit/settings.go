package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/j17-go/j17/storage"
)

// SettingsSpace is the record space of the auto-anchor settings, under the key "auto".
const SettingsSpace = "anchor_settings"

const settingsKey = "auto"

// MinAutoInterval is the shortest auto-anchor interval.
const MinAutoInterval = 60

// Settings are the auto-anchor settings: when Enabled, an anchor is due IntervalSeconds after
// the latest one.
type Settings struct {
	Enabled         bool  `json:"enabled"`
	IntervalSeconds int64 `json:"interval_seconds"`
}

// DefaultSettings are the settings of a store that never saved any: disabled, daily.
var DefaultSettings = Settings{IntervalSeconds: 24 * 60 * 60}

// GetSettings reads the auto-anchor settings.
func GetSettings(st storage.EventStore) (Settings, error) {
	raw, err := st.Get(SettingsSpace, settingsKey)
	if errors.Is(err, storage.ErrNotFound) {
		return DefaultSettings, nil
	}
	if err != nil {
		return Settings{}, err
	}
	var s Settings
	if err := json.Unmarshal(raw, &s); err != nil {
		return Settings{}, fmt.Errorf("audit: anchor settings: %w", err)
	}
	return s, nil
}

// PutSettings saves the auto-anchor settings.
func PutSettings(st storage.EventStore, s Settings) error {
	if s.IntervalSeconds < MinAutoInterval {
		return fmt.Errorf("%w: interval_seconds must be at least %d", ErrInvalid, MinAutoInterval)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = st.Commit(&storage.Record{Puts: []storage.Put{{Space: SettingsSpace, Key: settingsKey, Value: b}}})
	return err
}

// Due reports whether an automatic anchor is due at now, given the latest anchor's time (zero
// when there is none).
func (s Settings) Due(latest, now time.Time) bool {
	return s.Enabled && (latest.IsZero() || !now.Before(latest.Add(time.Duration(s.IntervalSeconds)*time.Second)))
}
