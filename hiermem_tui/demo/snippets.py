"""Verbatim code and shell blocks that the coding and ops topics paste into answers.

Why apart from :mod:`.topics`: these are long literal blocks written at column 0 (their
indentation is part of the text); out of the topic table, that table stays one readable file.
"""

from __future__ import annotations

from .topic import blocks

CODE_SNIPPETS = blocks('''
```python
def parse_line(line: str) -> Record | None:
    """Return None for blank or comment lines instead of raising."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    key, _, value = line.partition("=")
    return Record(key.strip(), value.strip())
```
~~
```rust
fn read_config(path: &Path) -> anyhow::Result<Config> {
    let text = fs::read_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(toml::from_str(&text)?)
}
```
~~
```bash
git bisect start
git bisect bad HEAD
git bisect good v{n}.0
git bisect run pytest -x tests/test_{file}.py
```
~~
```sql
CREATE INDEX IF NOT EXISTS idx_events_user_time ON events(user_id, created_at);
EXPLAIN QUERY PLAN SELECT * FROM events WHERE user_id = ? ORDER BY created_at DESC LIMIT 50;
```
~~
```go
ctx, cancel := context.WithTimeout(ctx, {n}*time.Millisecond)
defer cancel()
if err := w.Process(ctx, job); err != nil {
    return fmt.Errorf("process job %d: %w", job.ID, err)
}
```
~~
```python
@pytest.mark.parametrize("raw, expected", [("", []), ("a", ["a"]), ("a,b", ["a", "b"])])
def test_split_fields(raw: str, expected: list[str]) -> None:
    assert split_fields(raw) == expected
```
''')

OPS_SNIPPETS = blocks('''
```bash
kubectl -n prod rollout status deploy/api --timeout=120s
kubectl -n prod logs deploy/api --since=15m | grep -i error | head -50
```
~~
```nginx
location /api/ {
    proxy_pass http://127.0.0.1:{n}00;
    proxy_read_timeout 60s;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
}
```
~~
```bash
sudo du -xh /var --max-depth=2 | sort -h | tail -15
sudo journalctl -u postgresql --since "1 hour ago" --no-pager
```
~~
```yaml
resources:
  requests: {cpu: 250m, memory: 256Mi}
  limits: {memory: 512Mi}
```
''')
