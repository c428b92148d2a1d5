//! Pasting images in the app: a dropped or pasted image path becomes
//! `[image 1: 64x48 png]` in the input (the picture read by the app),
//! deleted whole by Backspace; Enter sends the image to the engine ahead
//! of the message, and the real engine sends it to the model (Anthropic
//! wire, loopback) after the text; a path that is not an image is typed
//! as pasted, with a notice; Ctrl+V reads the clipboard through `xclip`
//! (a stand-in on PATH) and, with no clipboard, says what to do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::engine_support;
use crate::loopback;
use crate::tui_support;

use loopback::ProviderWire;
use ratatui::crossterm::event::KeyCode;
use tui_support::{Clock, app, ctrl, key, screen, screen_text};
use waypoint::events::Op;
use waypoint::tui::outside;
use waypoint::tui::update::{self, Effect};

/// A real 2x2 PNG (red), as bytes.
fn png() -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAEUlEQVR4nGP4z8DwH4QZYAwAR8oH+WdZbrcAAAAASUVORK5CYII=")
        .unwrap()
}

/// Carries out the app's image effects as the app loop does.
async fn carry(a: &mut waypoint::tui::state::App, root: &std::path::Path, effects: Vec<Effect>) {
    for effect in effects {
        if let Effect::ReadImage(path) = effect {
            let read = outside::read_image(root, path.as_deref()).await;
            update::image_read(a, path, read);
        }
    }
}

#[tokio::test]
async fn a_pasted_image_path_becomes_a_token_and_reaches_the_model() {
    let clock = Clock::new();
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("my shot.png");
    std::fs::write(&shot, png()).unwrap();
    let mut a = app(&clock);
    let now = clock.at(1.0);
    for c in "what is this ".chars() {
        update::on_key(&mut a, key(KeyCode::Char(c)), now);
    }
    // A terminal pastes a dropped file as its quoted path.
    let effects = update::on_paste(&mut a, &format!("'{}'", shot.display()));
    assert!(
        matches!(&effects[..], [Effect::ReadImage(Some(_))]),
        "{effects:?}"
    );
    carry(&mut a, dir.path(), effects).await;
    assert_eq!(a.input.text(), "what is this [image 1: 2x2 png]");
    insta::assert_snapshot!(
        "image_token_in_the_input_60x8",
        screen(&mut a, 60, 8, now).backend()
    );

    // A second image, then Backspace takes it away whole.
    let effects = update::on_paste(
        &mut a,
        &format!("file://{}", shot.display()).replace(' ', "%20"),
    );
    carry(&mut a, dir.path(), effects).await;
    assert_eq!(
        a.input.text(),
        "what is this [image 1: 2x2 png][image 2: 2x2 png]"
    );
    update::on_key(&mut a, key(KeyCode::Backspace), now);
    assert_eq!(a.input.text(), "what is this [image 1: 2x2 png]");

    // Enter: the image goes ahead of the message.
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    let ops: Vec<Op> = effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Send(op) => Some(op),
            _ => None,
        })
        .collect();
    let [Op::Attach { images }, Op::Submit { text }] = &ops[..] else {
        panic!("attach then submit: {ops:?}");
    };
    assert_eq!(images.len(), 1, "only the image still in the text");
    assert_eq!(text, "what is this [image 1: 2x2 png]");

    // The real engine sends it to the model after the text.
    let mut rig =
        engine_support::Rig::<common::Anthropic>::default_with(vec![common::Anthropic::text(
            "A red square.",
        )])
        .await;
    for op in ops {
        rig.handle.ops.send(op).unwrap();
    }
    let events = rig.turn_events().await;
    engine_support::assert_completed(&events);
    let req = &rig.server.requests()[0];
    let content = req.messages()[0]["content"].as_array().unwrap().clone();
    assert_eq!(content[0]["text"], "what is this [image 1: 2x2 png]");
    let image = content
        .iter()
        .find(|b| b["type"] == "image")
        .expect("the image");
    use base64::Engine as _;
    assert_eq!(
        image["source"]["data"],
        base64::engine::general_purpose::STANDARD.encode(png())
    );
}

#[tokio::test]
async fn a_path_that_is_no_image_is_typed_and_ctrl_v_without_a_clipboard_says_so() {
    let clock = Clock::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fake.png"), "not a picture").unwrap();
    let mut a = app(&clock);
    let now = clock.at(1.0);
    let effects = update::on_paste(&mut a, "fake.png");
    carry(&mut a, dir.path(), effects).await;
    assert_eq!(a.input.text(), "fake.png", "nothing pasted is lost");
    let s = screen_text(&mut a, 100, 20, now);
    assert!(
        s.contains("Not attached: the image is not a PNG, JPEG, GIF or WebP"),
        "{s}"
    );

    // Ordinary text is pasted as ever.
    assert!(update::on_paste(&mut a, " and notes.txt").is_empty());
    assert_eq!(a.input.text(), "fake.png and notes.txt");

    // Ctrl+V asks for the clipboard; over ssh without a display it says
    // what to do instead.
    let effects = update::on_key(&mut a, ctrl('v'), now);
    assert!(
        matches!(&effects[..], [Effect::ReadImage(None)]),
        "{effects:?}"
    );
    let ssh = |k: &str| (k == "SSH_CONNECTION").then(|| "10.0.0.1 50000 10.0.0.2 22".into());
    let read = outside::read_image_in(dir.path(), None, &ssh).await;
    update::image_read(&mut a, None, read);
    let s = screen_text(&mut a, 100, 20, now);
    assert!(
        s.contains("No image pasted: no clipboard here (an ssh session)"),
        "{s}"
    );
    assert!(s.contains("paste or drag the image's path"), "{s}");
}

/// Ctrl+V on X11: the image comes from `xclip -selection clipboard -t
/// image/png -o` (a stand-in on PATH that checks its arguments and
/// prints the PNG); an empty clipboard says so.
#[tokio::test]
async fn ctrl_v_reads_the_clipboard_through_xclip() {
    let clock = Clock::new();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(dir.path().join("clip.png"), png()).unwrap();
    let script = format!(
        "#!/bin/sh\n[ \"$*\" = \"-selection clipboard -t image/png -o\" ] || exit 9\n[ -n \"$DISPLAY\" ] || exit 8\nexec cat '{}'\n",
        dir.path().join("clip.png").display()
    );
    let xclip = bin.join("xclip");
    crate::support::write_program(&xclip, script.as_bytes());
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let x11 = move |k: &str| match k {
        "DISPLAY" => Some(":0".into()),
        "PATH" => Some(path.clone().into()),
        _ => None,
    };
    let mut a = app(&clock);
    let read = outside::read_image_in(dir.path(), None, &x11).await;
    update::image_read(&mut a, None, read);
    assert_eq!(a.input.text(), "[image 1: 2x2 png]");
    assert_eq!(a.input.images.len(), 1);

    // Nothing in the clipboard: xclip prints nothing.
    std::fs::write(dir.path().join("clip.png"), "").unwrap();
    let read = outside::read_image_in(dir.path(), None, &x11).await;
    let Err(why) = read else {
        panic!("an empty clipboard is no image");
    };
    assert!(why.contains("xclip: no image in the clipboard"), "{why}");
}

#[test]
fn pasted_paths_of_images_are_recognised_as_terminals_paste_them() {
    let cases = [
        ("/home/me/shot.png", Some("/home/me/shot.png")),
        ("'/home/me/my shot.PNG'", Some("/home/me/my shot.PNG")),
        ("\"/tmp/a.jpeg\"\n", Some("/tmp/a.jpeg")),
        ("/home/me/my\\ shot.webp", Some("/home/me/my shot.webp")),
        (
            "file:///home/me/my%20shot.gif",
            Some("/home/me/my shot.gif"),
        ),
        ("shots/a.jpg", Some("shots/a.jpg")),
        ("notes.txt", None),
        ("look at a.png please", None),
        ("/a.png\n/b.png", None),
        ("", None),
    ];
    for (pasted, want) in cases {
        assert_eq!(update::image_path(pasted).as_deref(), want, "{pasted:?}");
    }
}

/// A FIFO named like an image (a hostile repository) does not hang the
/// app: it is refused as not a regular file, and the path stays typed.
#[tokio::test]
async fn a_fifo_named_like_an_image_is_refused_at_once() {
    let clock = Clock::new();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trap.png");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let mut a = app(&clock);
    let effects = update::on_paste(&mut a, "trap.png");
    tokio::time::timeout(
        std::time::Duration::from_secs(5),
        carry(&mut a, dir.path(), effects),
    )
    .await
    .expect("no hang");
    assert_eq!(a.input.text(), "trap.png");
    let s = screen_text(&mut a, 100, 20, clock.at(1.0));
    assert!(
        s.contains("trap.png: not") && s.contains("a regular file"),
        "{s}"
    );
}

#[tokio::test]
async fn ctrl_g_keeps_the_images_whose_tokens_survive_the_editor() {
    let clock = Clock::new();
    let now = clock.at(1.0);
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    std::fs::write(&shot, png()).unwrap();
    let mut a = app(&clock);
    let type_text = |a: &mut waypoint::tui::state::App, text: &str| {
        for c in text.chars() {
            update::on_key(a, key(KeyCode::Char(c)), now);
        }
    };
    type_text(&mut a, "compare ");
    let effects = update::on_paste(&mut a, &shot.display().to_string());
    carry(&mut a, dir.path(), effects).await;
    type_text(&mut a, " with ");
    let effects = update::on_paste(&mut a, &shot.display().to_string());
    carry(&mut a, dir.path(), effects).await;
    assert_eq!(
        a.input.text(),
        "compare [image 1: 2x2 png] with [image 2: 2x2 png]"
    );
    // The editor (a stand-in script) rewords the message and drops the
    // second image's token.
    let editor = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("tui_images_editor.sh");
    crate::support::write_program(
        &editor,
        b"#!/bin/sh\nsed -i -e 's/compare/describe/' -e 's/ with \\[image 2: 2x2 png\\]//' \"$1\"\n",
    );
    // SAFETY: no other test reads or writes VISUAL in this process (the
    // end-to-end ones give their app its own).
    unsafe { std::env::set_var("VISUAL", &editor) };
    let effects = update::on_key(&mut a, ctrl('g'), now);
    let [Effect::Edit(text)] = &effects[..] else {
        panic!("Ctrl+G opens the editor: {effects:?}");
    };
    let result = outside::run_editor(text).await;
    update::edited(&mut a, result);
    assert_eq!(a.input.text(), "describe [image 1: 2x2 png]");
    // The image that lost its token is named as left out.
    let shown = screen_text(&mut a, 100, 20, now);
    assert!(
        shown.contains("[image 2: 2x2 png] is no longer attached"),
        "{shown}"
    );
    // The kept token is still one piece, and the image goes with Enter.
    let effects = update::on_key(&mut a, key(KeyCode::Enter), now);
    let ops: Vec<Op> = effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Send(op) => Some(op),
            _ => None,
        })
        .collect();
    let [Op::Attach { images }, Op::Submit { text }] = &ops[..] else {
        panic!("attach then submit: {ops:?}");
    };
    assert_eq!(images.len(), 1);
    assert_eq!(text, "describe [image 1: 2x2 png]");
}
