//! The line splitter's tests: caps, stale replies, copies avoided.

use super::*;

async fn collect(input: &[u8], max: usize) -> Vec<String> {
    let (tx, mut rx) = mpsc::channel(100);
    read_lines(input, max, Default::default(), tx).await;
    let mut out = Vec::new();
    while let Some(m) = rx.recv().await {
        out.push(match m {
            Incoming::Line { bytes, .. } => format!("line {}", String::from_utf8_lossy(&bytes)),
            Incoming::Stale { other, .. } => format!("stale {other}"),
            Incoming::Oversized { len, .. } => format!("oversized {len}"),
            Incoming::Eof { .. } => "eof".into(),
            Incoming::Error { message, .. } => format!("error {message}"),
        });
    }
    out
}

#[tokio::test]
async fn splits_lines_and_caps_long_ones_without_losing_the_next() {
    let got = collect(b"ab\r\nxxxxxxxxxx\ncd\nlast", 5).await;
    assert_eq!(
        got,
        ["line ab", "oversized 10", "line cd", "line last", "eof"]
    );
}

#[tokio::test]
async fn a_flood_of_lines_is_dropped_not_waited_on() {
    use tokio::io::AsyncWriteExt;
    let (tx, mut rx) = mpsc::channel(4);
    // A 16-byte pipe: the writer can only finish if the reader keeps taking
    // bytes although nobody empties the channel after its first four lines.
    let (mut bot, referee) = tokio::io::duplex(16);
    let reader = tokio::spawn(read_lines(referee, 100, Default::default(), tx));
    let flood = "x\n".repeat(1000);
    // Not a timing assertion: only a guard so a regression fails instead of
    // hanging the suite.
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        bot.write_all(flood.as_bytes()),
    )
    .await
    .expect("the reader stalled on a full channel")
    .unwrap();
    drop(bot);
    let mut got = Vec::new();
    while let Some(m) = rx.recv().await {
        got.push(matches!(m, Incoming::Eof { .. }));
    }
    // Four lines fill the channel; of the rest, only what was still in the
    // 16-byte pipe when the writer finished (8 lines at most) can find room
    // later. Everything else was dropped, not waited on. End of file is last
    // and always delivered.
    let (eof, lines) = got.split_last().unwrap();
    assert!(*eof, "{got:?}");
    assert!(lines.iter().all(|e| !e));
    assert!(
        (4..=12).contains(&lines.len()),
        "{} lines kept",
        lines.len()
    );
    reader.await.unwrap();
}

#[tokio::test]
async fn an_endless_line_is_reported_once_as_soon_as_it_passes_the_cap() {
    let big = vec![b'x'; 100_000];
    let got = collect(&big, 1000).await;
    // The first read returns one 64 KiB buffer, which already passes the cap.
    assert_eq!(got, ["oversized 65536", "eof"]);
}

/// A 60 KB line (a long stale reply) is handed over as a slice of the read
/// buffer, never copied; a short one is copied out (so that it keeps no
/// buffer alive). Counted, not timed.
#[test]
fn a_long_line_is_handed_over_without_a_copy() {
    let (tx, mut rx) = mpsc::channel(8);
    let mut splitter = Splitter::new(64 * 1024, Default::default());
    let long = format!(
        "{{\"type\":\"reply\",\"id\":9,\"pad\":\"{}\"}}",
        "p".repeat(60_000)
    );
    let short = r#"{"type":"reply","id":3,"action":"pass"}"#;
    // As two reads would bring them: the long line split across both.
    let all = format!("{long}\n{short}\n");
    for chunk in [&all.as_bytes()[..40_000], &all.as_bytes()[40_000..]] {
        splitter.make_room();
        splitter.buf.extend_from_slice(chunk);
        assert!(splitter.split(chunk.len(), Instant::now(), &tx).is_some());
    }
    let mut got = Vec::new();
    while let Ok(Incoming::Line { bytes, .. }) = rx.try_recv() {
        got.push(bytes);
    }
    assert_eq!(got.len(), 2);
    assert_eq!(&got[0][..], long.as_bytes());
    assert_eq!(&got[1][..], short.as_bytes());
    assert_eq!(
        splitter.copied,
        short.len() as u64,
        "only the short line was copied"
    );
}

fn stale_line(id: u64, pad: usize) -> String {
    format!(
        "{{\"type\":\"reply\",\"id\":{id},\"pad\":\"{}\"}}",
        "p".repeat(pad)
    )
}

fn describe(m: Incoming) -> String {
    match m {
        Incoming::Line { bytes, .. } => format!("line of {}", bytes.len()),
        Incoming::Stale {
            other, during, len, ..
        } => format!("stale {other} during {during}, {len} bytes"),
        Incoming::Oversized { len, .. } => format!("oversized {len}"),
        Incoming::Eof { .. } => "eof".into(),
        Incoming::Error { message, .. } => format!("error {message}"),
    }
}

/// Once told that request 5 has had its stale reply, a long line that
/// opens as a reply to another request is handed over by its opening and
/// length, in whatever reads it comes; the rest is handed over whole: a
/// reply to 5, another opening, a short line, and every line before the
/// table said so. Nothing of a skipped line is kept or copied: the same
/// read buffer takes every read. Counted, not timed.
#[test]
fn once_told_of_a_stale_reply_long_lines_of_other_requests_are_read_no_further() {
    let (tx, mut rx) = mpsc::channel(32);
    let skip = Arc::<SkipStale>::default();
    let mut splitter = Splitter::new(64 * 1024, Arc::clone(&skip));
    let feed = |splitter: &mut Splitter, text: &str| {
        for chunk in text.as_bytes().chunks(READ_BYTES) {
            splitter.make_room();
            splitter.buf.extend_from_slice(chunk);
            assert!(splitter.split(chunk.len(), Instant::now(), &tx).is_some());
        }
    };
    let stale = stale_line(1005, 60_000);
    feed(&mut splitter, &format!("{stale}\n"));
    // The table reads that line (then drops it) and tells of its fault.
    let mut got = vec![describe(rx.try_recv().unwrap())];
    skip.set(Some(5));
    splitter.make_room();
    let base = splitter.buf.as_ptr() as usize;
    let short = stale_line(1005, 10);
    let crlf = stale_line(7, 300);
    feed(&mut splitter, &format!("{stale}\n{stale}\n{crlf}\r\n"));
    // Only stale lines since: every read went into the same buffer.
    let end = splitter.buf.as_ptr() as usize;
    assert!((base..base + READ_BYTES).contains(&end), "a new buffer");
    let right = stale_line(5, 60_000);
    let other = format!("{{\"id\":1005,{}", &stale[1..]);
    feed(
        &mut splitter,
        &format!("{right}\n{other}\n{short}\n{stale}"),
    );
    got.extend(std::iter::from_fn(|| rx.try_recv().ok()).map(describe));
    let n = stale.len();
    let expected = [
        format!("line of {n}"),
        format!("stale 1005 during 5, {n} bytes"),
        format!("stale 1005 during 5, {n} bytes"),
        format!("stale 7 during 5, {} bytes", crlf.len()),
        format!("line of {}", right.len()),
        format!("line of {}", other.len()),
        format!("line of {}", short.len()),
    ];
    assert_eq!(got, expected);
    assert_eq!(splitter.unread, 3);
    assert_eq!(splitter.copied, short.len() as u64);
    // The last line has no newline yet: read no further, and at end of
    // file still a line.
    assert_eq!(
        splitter.rest(Instant::now()).map(describe),
        Some(format!("stale 1005 during 5, {n} bytes"))
    );
    skip.set(None);
    feed(&mut splitter, &format!("{stale}\n"));
    assert_eq!(rx.try_recv().map(describe), Ok(format!("line of {n}")));
}

/// A line read no further than its opening is still capped: past the cap
/// it is reported oversized once, as soon as the cap is passed, and the
/// next line is read as ever.
#[test]
fn a_skipped_line_past_the_cap_is_oversized() {
    let (tx, mut rx) = mpsc::channel(8);
    let skip = Arc::<SkipStale>::default();
    skip.set(Some(5));
    let mut splitter = Splitter::new(50_000, skip);
    let long = stale_line(1005, 100_000);
    let text = format!("{long}\n{}\n", stale_line(1005, 1_000));
    for chunk in text.as_bytes().chunks(30_000) {
        splitter.make_room();
        splitter.buf.extend_from_slice(chunk);
        assert!(splitter.split(chunk.len(), Instant::now(), &tx).is_some());
    }
    let got: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok())
        .map(describe)
        .collect();
    let next = stale_line(1005, 1_000).len();
    assert_eq!(
        got,
        [
            "oversized 60000".to_owned(),
            format!("stale 1005 during 5, {next} bytes")
        ]
    );
}

/// The table tells the reader of a stale reply after it has read one: the
/// reader lets it run after handing over a long line whole, so the lines
/// already waiting in the pipe behind it are not all read whole first.
/// On one thread, so the order is the runtime's, not the host's speed.
#[tokio::test(flavor = "current_thread")]
async fn after_a_long_line_the_table_can_answer_before_the_next_read() {
    use tokio::io::AsyncWriteExt;
    let (mut bot, referee) = tokio::io::duplex(1 << 20);
    let stale = stale_line(1005, 60_000);
    bot.write_all(format!("{stale}\n").repeat(10).as_bytes())
        .await
        .unwrap();
    drop(bot);
    let skip = Arc::<SkipStale>::default();
    let (tx, mut rx) = mpsc::channel(32);
    let reader = tokio::spawn(read_lines(referee, 1 << 16, Arc::clone(&skip), tx));
    let first = rx.recv().await.map(describe);
    assert_eq!(first, Some(format!("line of {}", stale.len())));
    skip.set(Some(5));
    let mut rest = Vec::new();
    while let Some(m) = rx.recv().await {
        rest.push(describe(m));
    }
    reader.await.unwrap();
    let skipped = format!("stale 1005 during 5, {} bytes", stale.len());
    assert_eq!(rest.len(), 10, "{rest:?}");
    assert!(rest[..9].iter().all(|m| *m == skipped), "{rest:?}");
}

/// A duplex pipe that counts its reads and pauses.
struct Counted {
    inner: tokio::io::DuplexStream,
    reads: std::sync::Arc<std::sync::atomic::AtomicU32>,
    pauses: std::sync::Arc<std::sync::atomic::AtomicU32>,
}

impl tokio::io::AsyncRead for Counted {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let got = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if got.is_ready() {
            self.reads
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        got
    }
}

impl Source for Counted {
    async fn pause(&mut self, d: Duration) {
        self.pauses
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::time::sleep(d).await;
    }
}

fn counted(
    size: usize,
) -> (
    tokio::io::DuplexStream,
    Counted,
    [std::sync::Arc<std::sync::atomic::AtomicU32>; 2],
) {
    let (bot, referee) = tokio::io::duplex(size);
    let counters = [Default::default(), Default::default()];
    let src = Counted {
        inner: referee,
        reads: std::sync::Arc::clone(&counters[0]),
        pauses: std::sync::Arc::clone(&counters[1]),
    };
    (bot, src, counters)
}

/// Not a timing assertion a busy host can break: however slow the host, a
/// window of [`READ_PAUSE`] holds at most [`IDLE_READS`] reads that hand
/// no reply-sized line over, so the reads are bounded by the elapsed time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_trickle_is_read_in_batches() {
    use std::sync::atomic::Ordering;
    use tokio::io::AsyncWriteExt;
    let (mut bot, src, [reads, _]) = counted(64 * 1024);
    let (tx, mut rx) = mpsc::channel(4);
    let start = Instant::now();
    let reader = tokio::spawn(read_lines(src, 1 << 16, Default::default(), tx));
    for _ in 0..20_000 {
        bot.write_all(b" ").await.unwrap();
    }
    bot.write_all(b"{}\n").await.unwrap();
    drop(bot);
    reader.await.unwrap();
    let windows = start.elapsed().as_millis() as u32 / READ_PAUSE.as_millis() as u32 + 2;
    let reads = reads.load(Ordering::Relaxed);
    assert!(
        reads <= IDLE_READS * windows,
        "{reads} reads in {:?} (at most {})",
        start.elapsed(),
        IDLE_READS * windows
    );
    let mut line = None;
    while let Some(Incoming::Line { bytes, .. }) = rx.recv().await {
        line = Some(bytes.len());
    }
    assert_eq!(line, Some(20_002), "the trickled line arrived whole");
}

/// A bot that answers each request at once, with a line per write, is never
/// paused, however many lines it sends.
#[tokio::test]
async fn reply_sized_lines_are_never_paused() {
    use std::sync::atomic::Ordering;
    use tokio::io::AsyncWriteExt;
    let (mut bot, src, [reads, pauses]) = counted(1024);
    let (tx, mut rx) = mpsc::channel(4);
    let reader = tokio::spawn(read_lines(src, 1 << 16, Default::default(), tx));
    for id in 0..1000 {
        let reply = format!("{{\"type\":\"reply\",\"id\":{id},\"action\":\"pass\"}}\n");
        bot.write_all(reply.as_bytes()).await.unwrap();
        // Asked, answered, heard: the next is written once this is read.
        assert!(matches!(rx.recv().await, Some(Incoming::Line { .. })));
    }
    drop(bot);
    reader.await.unwrap();
    assert!(reads.load(Ordering::Relaxed) >= 1000);
    assert_eq!(pauses.load(Ordering::Relaxed), 0);
}
