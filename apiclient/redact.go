package apiclient

import (
	"fmt"
	"log/slog"
)

const redacted = "--- REDACTED ---"

// redactedCopy returns a copy of c with every secret replaced by a marker.
func (c Config) redactedCopy() Config {
	if c.BearerToken != "" {
		c.BearerToken = redacted
	}
	if c.Password != "" {
		c.Password = redacted
	}
	if len(c.TLS.KeyData) > 0 {
		c.TLS.KeyData = []byte(redacted)
	}
	if len(c.TLS.CertData) > 0 {
		c.TLS.CertData = []byte("--- " + fmt.Sprint(len(c.TLS.CertData)) + " bytes ---")
	}
	if len(c.TLS.CAData) > 0 {
		c.TLS.CAData = []byte("--- " + fmt.Sprint(len(c.TLS.CAData)) + " bytes ---")
	}
	if c.Exec != nil {
		e := *c.Exec
		e.Env = append([]ExecEnvVar(nil), e.Env...)
		for i := range e.Env {
			e.Env[i].Value = redacted
		}
		c.Exec = &e
	}
	c.ProxyURL = redactURL(c.ProxyURL)
	return c
}

// configView has Config's fields but none of its methods, so formatting it cannot recurse.
type configView Config

// String formats the configuration with the bearer token, password, private key and exec
// environment values redacted, so that a Config can be logged or printed safely.
func (c Config) String() string { return fmt.Sprintf("%+v", configView(c.redactedCopy())) }

// GoString is String for %#v.
func (c Config) GoString() string { return "apiclient.Config" + c.String() }

// LogValue makes slog print the redacted configuration.
func (c Config) LogValue() slog.Value {
	r := c.redactedCopy()
	return slog.GroupValue(
		slog.String("host", r.Host),
		slog.Bool("bearerToken", c.BearerToken != ""),
		slog.String("bearerTokenFile", r.BearerTokenFile),
		slog.String("username", r.Username),
		slog.Bool("exec", r.Exec != nil),
		slog.String("caFile", r.TLS.CAFile),
		slog.Bool("insecure", r.TLS.Insecure),
		slog.String("namespace", r.Namespace),
	)
}
