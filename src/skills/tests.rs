use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill_md(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\nlicense: MIT\nallowed-tools: [bash]\n---\n# {name}\nDo it well.\n"
    )
}

#[test]
fn skills_and_commands_are_found_at_each_place_and_the_nearest_wins() {
    let repo = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let work = repo.path().join("crates/app");
    std::fs::create_dir_all(&work).unwrap();
    write(
        &repo.path().join(".agents/skills/review/SKILL.md"),
        &skill_md("review", "Review a change (root)"),
    );
    write(
        &work.join(".claude/skills/review/SKILL.md"),
        &skill_md("review", "Review a change (near)"),
    );
    write(
        &work.join(".claude/skills.local/mine/SKILL.md"),
        &skill_md("mine", "Personal"),
    );
    write(
        &home.path().join(".agents/skills/deploy/SKILL.md"),
        &skill_md("deploy", "Ship it"),
    );
    write(
        &home.path().join(".claude/skills/nameless/SKILL.md"),
        "---\ndescription: Takes its folder's name\n---\nbody\n",
    );
    write(
        &config.path().join("skills/broken/SKILL.md"),
        "---\nname: [unclosed\n---\n",
    );
    write(
        &repo.path().join(".claude/commands/fix-issue.md"),
        "---\ndescription: Fix an issue\nargument-hint: NUMBER\n---\nFix issue #$1: $ARGUMENTS\n",
    );
    write(
        &work.join(".waypoint/commands/frontend/test.md"),
        "Run the frontend tests\n\nnpm test\n",
    );
    write(
        &home.path().join(".claude/commands/standup.md"),
        "# Write my standup\n",
    );
    let places = Places::of(&work, Some(home.path()), Some(config.path()));
    let catalog = Catalog::discover(&places);
    let names: Vec<&str> = catalog.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["mine", "review", "deploy", "nameless"]);
    assert_eq!(
        catalog.skill("review").unwrap().description,
        "Review a change (near)"
    );
    assert_eq!(catalog.skill("deploy").unwrap().origin, Origin::User);
    assert_eq!(catalog.problems.len(), 1, "{:?}", catalog.problems);
    assert!(catalog.problems[0].contains("broken/SKILL.md skipped"));
    let commands: Vec<&str> = catalog.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(commands, ["frontend:test", "fix-issue", "standup"]);
    let fix = catalog.command("fix-issue").unwrap();
    assert_eq!(fix.hint.as_deref(), Some("NUMBER"));
    assert_eq!(
        expand(&fix.body, "42 urgently"),
        "Fix issue #42: 42 urgently"
    );
    assert_eq!(
        catalog.command("frontend:test").unwrap().description,
        "Run the frontend tests"
    );
    assert_eq!(
        catalog.command("standup").unwrap().description,
        "Write my standup"
    );
    assert_eq!(
        body(catalog.skill("mine").unwrap()).unwrap(),
        "# mine\nDo it well."
    );
}

#[test]
fn a_linked_skill_file_is_not_followed() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(
        &outside.path().join("SKILL.md"),
        &skill_md("evil", "Reads what it should not"),
    );
    std::fs::create_dir_all(ws.path().join(".agents/skills/evil")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("SKILL.md"),
        ws.path().join(".agents/skills/evil/SKILL.md"),
    )
    .unwrap();
    let catalog = Catalog::discover(&Places::of(ws.path(), None, None));
    assert!(catalog.skills.is_empty());
    assert!(
        catalog.problems[0].contains("not read"),
        "{:?}",
        catalog.problems
    );
}

#[test]
fn the_prompt_keeps_to_its_budget_and_names_the_rest() {
    let skills: Vec<Skill> = (0..200)
        .map(|i| Skill {
            name: format!("skill-{i:03}"),
            description: format!("What skill {i} is for, said in a sentence of some length."),
            path: PathBuf::from(format!("/s/{i}/SKILL.md")),
            origin: Origin::Project,
        })
        .collect();
    let budget = 4000;
    let block = prompt_block(&skills, budget);
    let described = block.lines().filter(|l| l.starts_with("- skill-")).count();
    assert!(described > 10 && described < 200, "{described}");
    let (head, more) = block.split_once("More skills").unwrap();
    assert!(head.len() <= budget);
    assert!(more.contains("skill-199"));
    assert!(prompt_block(&[], budget).is_empty());
}

#[test]
fn a_plan_section_becomes_a_template_and_shell_lines_are_not_run() {
    let body = "# Release\nSteps.\n\n## Plan\n- [ ] Bump the version\n- [ ] Update the CHANGELOG\n* [ ] Tag and push\n\n## Notes\n- not an item\n";
    let texts: Vec<String> = plan_template(body).into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        texts,
        ["Bump the version", "Update the CHANGELOG", "Tag and push"]
    );
    // An indented check line under an item is its check.
    let checked = "## Plan\n- [ ] Run the tests\n  - check: `cargo test`\n- [ ] Tag it\n";
    assert_eq!(
        plan_template(checked),
        [
            ("Run the tests".to_string(), Some("cargo test".to_string())),
            ("Tag it".to_string(), None)
        ]
    );
    assert!(plan_template("no plan here").is_empty());
    let out = expand("Status:\n!`git status`\nThen $ARGUMENTS", "commit");
    assert!(out.contains("Then commit"));
    assert!(out.contains("Waypoint did not run them"));
    assert_eq!(
        expand("Review the code", "carefully"),
        "Review the code\n\ncarefully"
    );
}

#[test]
fn inline_shell_anywhere_in_a_command_or_skill_is_named_as_not_run() {
    // Claude Code's inline form, mid-line: each command is named.
    let out = expand(
        "## Context\n- Status: !`git status`\n- Branch: !`git branch --show-current`\nCommit it.",
        "",
    );
    assert!(
        out.starts_with("## Context\n- Status: !`git status`"),
        "{out}"
    );
    assert!(out.contains("Waypoint did not run them"), "{out}");
    assert!(
        out.contains("`git status`, `git branch --show-current`"),
        "{out}"
    );
    // `!` and code spans that are not the form: no note.
    for plain in [
        "Use `!` to negate.",
        "Run `cargo test`!",
        "Wow! `x` and !` unclosed",
    ] {
        assert!(!expand(plain, "").contains("did not run"), "{plain}");
    }
}
