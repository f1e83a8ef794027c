//! `referee show --html`: the replay page in a real headless browser (Debian's
//! `chromium`; `scripts/test` installs it; see `browser.rs`). The page reads its URL fragment and drives
//! its own controls (`#deal=1&next=12` clicks Forward twelve times), and
//! `--dump-dom` gives the page as drawn. Every expectation comes from the
//! transcript's own lines, not from the page's data.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::browser::{self, dom, screenshot};
use crate::support::{play, referee, Done};

/// The text between `start` (first occurrence) and the next `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start:?} not in the page"))
        + start.len();
    let to = text[from..].find(end).unwrap() + from;
    &text[from..to]
}

/// The `data-card` values in `html`.
fn cards(html: &str) -> Vec<String> {
    html.split("data-card=\"")
        .skip(1)
        .map(|s| s[..2].to_owned())
        .collect()
}

fn seat_box(dom: &str, seat: usize) -> &str {
    between(dom, &format!("id=\"seat-{seat}\""), "</section>")
}

fn body_attr(dom: &str, name: &str) -> String {
    between(dom, &format!("{name}=\""), "\"").to_owned()
}

fn strings(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect()
}

struct Game {
    _done: Done,
    page: PathBuf,
    lines: Vec<serde_json::Value>,
}

fn game() -> Game {
    let done = play().seed(41).ok();
    let page = done.dir.join("replay.html");
    let out = referee()
        .arg("show")
        .arg(done.transcript(1))
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Game {
        lines: done.lines(1),
        _done: done,
        page,
    }
}

/// The step (frame) of transcript line `i`: one per line after the header.
fn step_of(i: usize) -> usize {
    i - 1
}

#[test]
fn steps_through_a_deal_in_a_real_browser() {
    if !browser::available() {
        return;
    }
    let g = game();
    let html = std::fs::read_to_string(&g.page).unwrap();
    for external in ["src=", "href=", "url(", "@import", "http:", "https:"] {
        assert!(!html.contains(external), "the page loads {external:?}");
    }
    let first_trick = g.lines.iter().position(|l| l["type"] == "trick").unwrap();
    let trick = &g.lines[first_trick];
    let deal = &g.lines[1];
    assert_eq!(deal["type"], "deal");

    // The first deal: everyone's six cards, as dealt.
    let d = dom(&g.page, "deal=1");
    assert_eq!(body_attr(&d, "data-step"), "0");
    assert!(
        between(&d, "id=\"caption\"", "</div>").contains("Deal 1"),
        "{d}"
    );
    for s in 0..6 {
        let shown: BTreeSet<String> = cards(seat_box(&d, s)).into_iter().collect();
        assert_eq!(shown, strings(&deal["hands"][s]), "seat {s}");
    }

    // Forward to the end of trick 1: its six cards on the table by seat, the
    // winner named, and each card gone from its player's hand.
    let fragment = format!("deal=1&next={}", step_of(first_trick));
    let d = dom(&g.page, &fragment);
    assert_eq!(body_attr(&d, "data-step"), step_of(first_trick).to_string());
    let centre = between(&d, "id=\"centre\"", "<section");
    let mut on_table = Vec::new();
    for part in centre.split("<span").skip(1) {
        let card = cards(part);
        let seat = between(part, "data-seat=\"", "\"");
        on_table.push((seat.to_owned(), card[0].clone()));
    }
    let want: Vec<(String, String)> = trick["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["seat"].to_string(),
                p["card"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(on_table, want);
    assert!(
        centre.contains(&format!("seat {} wins trick 1", trick["winner"])),
        "{centre}"
    );
    for (seat, card) in &want {
        let hand = cards(seat_box(&d, seat.parse().unwrap()));
        assert!(!hand.contains(card), "seat {seat} still holds {card}");
        assert_eq!(hand.len(), 5, "seat {seat}: {hand:?}");
    }
    screenshot(&g.page, &fragment, "trick-1.png");

    // One step back: the six cards are down but the trick is not yet taken.
    let d = dom(&g.page, &format!("{fragment}&prev=1"));
    let centre = between(&d, "id=\"centre\"", "<section");
    assert_eq!(cards(centre).len(), 6);
    assert!(!centre.contains("wins trick"), "{centre}");

    // Jump to deal 2 with the deal selector.
    let second = g
        .lines
        .iter()
        .filter(|l| l["type"] == "deal")
        .nth(1)
        .unwrap();
    let d = dom(&g.page, "deal=2");
    assert_eq!(body_attr(&d, "data-deal"), "2");
    for s in 0..6 {
        let shown: BTreeSet<String> = cards(seat_box(&d, s)).into_iter().collect();
        assert_eq!(shown, strings(&second["hands"][s]), "deal 2, seat {s}");
    }
}

/// The docs' own example, `#deal=3&seat=2&step=40`, opens deal 3's 40th step
/// as seat 2 saw it, and the counter shows that number; `step` alone is the
/// game's step as the counter counts it, from 1 (issue 45: the deal was
/// ignored, and the step was one past the counter's).
#[test]
fn the_fragment_s_step_is_the_counter_s_in_the_game_or_in_the_deal() {
    if !browser::available() {
        return;
    }
    let g = game();
    let deals: Vec<usize> = (0..g.lines.len())
        .filter(|&i| g.lines[i]["type"] == "deal")
        .collect();
    let steps = g.lines.len() - 1;
    let (start, end) = (step_of(deals[2]), step_of(deals[3]) - 1);
    assert!(end - start >= 40, "deal 3 has {} steps", end - start + 1);
    let counter = |d: &str| between(d, "id=\"counter\">", "<").to_owned();

    let d = dom(&g.page, "deal=3&seat=2&step=40");
    assert_eq!(body_attr(&d, "data-deal"), "3");
    assert_eq!(body_attr(&d, "data-view"), "2");
    assert_eq!(body_attr(&d, "data-step"), (start + 39).to_string());
    assert_eq!(
        counter(&d),
        format!("step {} of {steps} · deal 3, step 40", start + 40)
    );

    let d = dom(&g.page, "step=40");
    assert_eq!(body_attr(&d, "data-step"), "39");
    assert!(counter(&d).starts_with(&format!("step 40 of {steps} · deal ")));

    // A step past the deal's end stays in the deal: its last step.
    let d = dom(&g.page, "deal=3&step=999");
    assert_eq!(body_attr(&d, "data-step"), end.to_string());
    assert_eq!(body_attr(&d, "data-deal"), "3");
}

#[test]
fn a_seat_view_shows_that_seat_its_cards_only() {
    if !browser::available() {
        return;
    }
    let g = game();
    let me = 2;
    // Just before play: every exchange and the dealer's discard are done.
    let at = g
        .lines
        .iter()
        .position(|l| l["type"] == "dealer_discard")
        .unwrap();
    let mut hand = strings(&g.lines[1]["hands"][me]);
    let mut other_exchange = None;
    for (i, l) in g.lines[..=at].iter().enumerate() {
        if l["type"] == "exchange" && l["seat"] == me {
            hand = hand
                .difference(&strings(&l["discarded"]))
                .cloned()
                .collect();
            hand.extend(strings(&l["drawn"]));
        } else if l["type"] == "exchange" && !strings(&l["discarded"]).is_empty() {
            other_exchange = Some(i);
        }
        if l["type"] == "dealer_discard" && l["seat"] == me {
            hand.extend(strings(&l["picked_up"]));
            hand = hand
                .difference(&strings(&l["discarded"]))
                .cloned()
                .collect();
        }
    }
    let fragment = format!("seat={me}&deal=1&next={}", step_of(at));
    let d = dom(&g.page, &fragment);
    assert_eq!(body_attr(&d, "data-view"), me.to_string());
    screenshot(&g.page, &fragment, "seat-2-view.png");
    let table = between(&d, "<main", "</main>");
    // Its own hand face up; nobody else's card anywhere on the table.
    let shown: BTreeSet<String> = cards(seat_box(&d, me)).into_iter().collect();
    assert_eq!(shown, hand);
    assert_eq!(cards(table).len(), hand.len(), "{table}");
    for s in (0..6).filter(|&s| s != me) {
        let other = seat_box(&d, s);
        assert!(cards(other).is_empty(), "seat {s} shown: {other}");
        assert_eq!(other.matches("card back").count(), 6, "seat {s}: {other}");
    }
    // Another seat's exchange is told as a count, without its cards.
    let i = other_exchange.expect("some seat exchanged cards");
    let l = &g.lines[i];
    let d = dom(&g.page, &format!("seat={me}&deal=1&next={}", step_of(i)));
    let caption = between(&d, "id=\"caption\"", "</div>");
    let count = strings(&l["discarded"]).len();
    assert!(
        caption.contains(&format!("seat {} exchanges {count} card(s)", l["seat"])),
        "{caption}"
    );
    // The same step for everyone names the cards.
    let d = dom(&g.page, &format!("seat=all&deal=1&next={}", step_of(i)));
    let caption = between(&d, "id=\"caption\"", "</div>");
    let first = strings(&l["discarded"]).into_iter().next().unwrap();
    assert!(caption.contains(&crate::show::shown(&first)), "{caption}");
}

/// A tournament folder's page: the standings with each entrant's win-rate
/// interval drawn as a bar, and a link to every game's replay, in the browser.
#[test]
fn a_tournament_page_draws_the_intervals_and_links_every_game() {
    if !browser::available() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("bracket");
    let ok = referee()
        .args([
            "tournament",
            "--format",
            "round-robin",
            "--seed",
            "3",
            "--seed-secret",
            crate::support::SECRET,
            "--quiet",
        ])
        .args([
            "--entrant",
            "a=inproc:heuristic",
            "--entrant",
            "b=inproc:random",
        ])
        .args([
            "--entrant",
            "c=inproc:random",
            "--entrant",
            "d=inproc:random",
        ])
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let page = scratch.path().join("site/bracket.html");
    let out = referee()
        .arg("show")
        .arg(&dir)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let standings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("standings.json")).unwrap())
            .unwrap();
    let entrants = standings["entrants"].as_array().unwrap();
    let drawn = dom(&page, "");
    // One row per entrant, in the standings' order, each bar placed at its
    // interval (percent of the bar, to one decimal).
    let rows: Vec<&str> = drawn.split("<tr class=\"entrant\">").skip(1).collect();
    assert_eq!(rows.len(), entrants.len(), "{drawn}");
    for (row, e) in rows.iter().zip(entrants) {
        assert!(row.contains(e["name"].as_str().unwrap()), "{row}");
        let lo = e["win_rate_ci"][0].as_f64().unwrap();
        let hi = e["win_rate_ci"][1].as_f64().unwrap();
        let pct = |x: f64| (x * 1000.0).round() / 10.0;
        let want = format!("left:{}%;width:{}%", pct(lo), pct(hi - lo));
        assert!(row.contains(&want), "want {want:?} in {row}");
    }
    // A link to every game, and every link leads to a replay page that draws.
    let games: Vec<_> = std::fs::read_dir(dir.join("games"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .filter(|e| !e.file_name().to_string_lossy().contains("timings"))
        .collect();
    let links: Vec<&str> = drawn
        .split("<a href=\"")
        .skip(1)
        .map(|l| &l[..l.find('"').unwrap()])
        .collect();
    assert_eq!(links.len(), games.len(), "{links:?}");
    assert!(!links.is_empty());
    for link in &links {
        assert!(page.with_file_name(link).is_file(), "{link} is not there");
    }
    let first = dom(&page.with_file_name(links[0]), "deal=1");
    assert!(first.contains("</main>"));
    screenshot(&page, "", "tournament.png");
}

/// Run after the page's own script: draws every step in every view (the
/// page's `step`, `me` and `render` are its script's globals) and measures the
/// seat boxes as laid out, writing what it found into `#layout-check`.
const LAYOUT_CHECK: &str = r##"<script>
(function () {
  const found = { frames: 0, boxes: 0, six: 0, overlaps: [], wrapped: [], outside: [] };
  const rect = e => e.getBoundingClientRect();
  // Boxes closer than GAP px look joined: they count as meeting.
  const GAP = 8;
  const apart = (a, b) => a.right + GAP <= b.left || b.right + GAP <= a.left
    || a.bottom + GAP <= b.top || b.bottom + GAP <= a.top;
  const tableBox = rect(document.getElementById("table"));
  for (const view of [null, 0, 1, 2, 3, 4, 5]) {
    for (let k = 0; k < F.length; k++) {
      me = view; step = k; render();
      found.frames++;
      const boxes = [0, 1, 2, 3, 4, 5].map(s => rect(document.getElementById("seat-" + s)));
      const centre = rect(document.getElementById("centre"));
      for (let s = 0; s < 6; s++) {
        const b = boxes[s];
        if (b.width <= 0 || b.height <= 0) found.outside.push([view, k, s, "empty"]);
        found.boxes++;
        if (b.left < tableBox.left || b.right > tableBox.right || b.top < tableBox.top)
          found.outside.push([view, k, s]);
        if (!apart(b, centre)) found.overlaps.push([view, k, s, "centre"]);
        for (let t = s + 1; t < 6; t++)
          if (!apart(b, boxes[t])) found.overlaps.push([view, k, s, t]);
        const cards = [...document.querySelectorAll("#seat-" + s + " .hand .card")];
        if (cards.length === 6) {
          found.six++;
          const tops = new Set(cards.map(c => Math.round(rect(c).top)));
          if (tops.size !== 1) found.wrapped.push([view, k, s]);
        }
      }
    }
  }
  const out = document.createElement("pre");
  out.id = "layout-check";
  out.textContent = JSON.stringify(found);
  document.body.append(out);
})();
</script>"##;

#[test]
fn at_1400_by_1000_no_seat_box_meets_another_and_six_cards_sit_on_one_row() {
    if !browser::available() {
        return;
    }
    let g = game();
    let html = std::fs::read_to_string(&g.page).unwrap();
    assert_eq!(html.matches("</body>").count(), 1);
    let checked = g.page.with_file_name("layout-check.html");
    std::fs::write(
        &checked,
        html.replace("</body>", &format!("{LAYOUT_CHECK}</body>")),
    )
    .unwrap();
    let d = browser::dom_in(&checked, "deal=1", (1400, 1000));
    let found: serde_json::Value =
        serde_json::from_str(between(&d, "<pre id=\"layout-check\">", "</pre>")).unwrap();
    let frames = g.lines.len() - 1;
    assert_eq!(
        found["frames"],
        7 * frames,
        "every step in every view: {found}"
    );
    assert_eq!(found["boxes"], 6 * 7 * frames, "{found}");
    // Every hand of the play holds six cards at its first trick: hundreds measured.
    assert!(found["six"].as_u64().unwrap() > 6 * 7, "{found}");
    for what in ["wrapped", "outside", "overlaps"] {
        let bad = found[what].as_array().unwrap();
        let first: Vec<_> = bad.iter().take(8).collect();
        assert!(
            bad.is_empty(),
            "{} {what}, the first [view, step, seat, ...]: {first:?}",
            bad.len()
        );
    }
}
