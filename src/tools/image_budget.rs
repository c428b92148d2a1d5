//! The images one model reply may bring into the conversation through its
//! tool calls (a review saw 100 `read_file` calls of 3.7 MB PNGs in one
//! reply take 2 GB of memory and write 493 MB of transcript). Invariant:
//! the images a reply's calls give, together, are at most [`MAX_IMAGES`]
//! and [`MAX_BYTES`]; a call past either gets a text result that says so
//! and what to do instead. Calls that run beside each other share it.

use std::sync::{Mutex, PoisonError};

/// The most images one reply's calls show.
pub const MAX_IMAGES: usize = 20;

/// The most image bytes (before base64) one reply's calls show.
pub const MAX_BYTES: usize = 20_000_000;

/// What one reply's calls have shown so far.
#[derive(Debug, Default)]
pub struct ImageBudget(Mutex<Spent>);

#[derive(Clone, Copy, Debug, Default)]
struct Spent {
    images: usize,
    bytes: usize,
}

impl ImageBudget {
    /// Whether another image may still be shown (its size unknown yet):
    /// `Err` says why not.
    pub fn room(&self) -> Result<(), String> {
        let spent = *self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if spent.images >= MAX_IMAGES || spent.bytes >= MAX_BYTES {
            return Err(spent_message(spent));
        }
        Ok(())
    }

    /// Takes an image of `bytes` from the budget; `Err` (nothing taken)
    /// says the budget is spent and what to do.
    pub fn take(&self, bytes: usize) -> Result<(), String> {
        let mut spent = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if spent.images >= MAX_IMAGES || spent.bytes.saturating_add(bytes) > MAX_BYTES {
            return Err(spent_message(*spent));
        }
        spent.images += 1;
        spent.bytes += bytes;
        Ok(())
    }
}

fn spent_message(spent: Spent) -> String {
    format!(
        "this reply's images are spent ({} shown, {:.1} MB; at most {MAX_IMAGES} images and {} MB per reply): look at the images shown first, then ask for the rest in your next reply, fewer at a time",
        spent.images,
        spent.bytes as f64 / 1e6,
        MAX_BYTES / 1_000_000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_images_or_twenty_megabytes_then_a_message() {
        let budget = ImageBudget::default();
        for _ in 0..MAX_IMAGES {
            budget.take(1000).unwrap();
        }
        let e = budget.take(1).unwrap_err();
        assert!(e.contains("20 shown") && e.contains("next reply"), "{e}");
        assert!(budget.room().is_err());

        let budget = ImageBudget::default();
        for _ in 0..5 {
            budget.take(3_750_000).unwrap();
        }
        // 18.75 MB taken: one more of 3.75 MB would pass 20 MB.
        assert!(budget.room().is_ok());
        let e = budget.take(3_750_000).unwrap_err();
        assert!(e.contains("5 shown, 18.8 MB"), "{e}");
        budget.take(1_000_000).unwrap();
    }
}
