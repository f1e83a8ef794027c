//! One vocabulary for results: a team is named by its entrants (the names its two
//! bots gave in `hello`), never by a number that changes meaning when seats rotate.

/// Names for the three teams, from the six players' names in lineup (or seat)
/// order: team `k` holds positions `k` and `k + 3`. Partners with one name give
/// that name, others `"a & b"`; teams whose names collide get `#1`, `#2`, ... in
/// team order, so every team's name is unique.
pub fn team_names<S: AsRef<str>>(players: &[S]) -> [String; 3] {
    let mut names: [String; 3] = std::array::from_fn(|k| {
        let (a, b) = (players[k].as_ref(), players[k + 3].as_ref());
        if a == b {
            a.to_owned()
        } else {
            format!("{a} & {b}")
        }
    });
    let plain = names.clone();
    for k in 0..3 {
        if plain.iter().filter(|n| **n == plain[k]).count() > 1 {
            let nth = plain[..=k].iter().filter(|n| **n == plain[k]).count();
            names[k] = format!("{} #{nth}", plain[k]);
        }
    }
    names
}

/// `"heuristic 22, random #1 9, random #2 -3"`: scores by team, with names.
pub fn scores_text(names: &[String; 3], scores: [i32; 3]) -> String {
    (0..3)
        .map(|k| format!("{} {}", names[k], scores[k]))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teams_are_named_by_their_entrants_and_never_collide() {
        let players = [
            "heuristic",
            "random",
            "random",
            "heuristic",
            "random",
            "random",
        ];
        assert_eq!(
            team_names(&players),
            ["heuristic", "random #1", "random #2"]
        );
        let mixed = ["a", "b", "c", "x", "b", "c"];
        assert_eq!(team_names(&mixed), ["a & x", "b", "c"]);
        let three = ["p", "p", "p", "p", "p", "p"];
        assert_eq!(team_names(&three), ["p #1", "p #2", "p #3"]);
    }
}
