pub mod cnn;
pub mod models;

/// The fallback counter is process-wide: the tests of one binary that read it take
/// turns.
#[allow(dead_code)]
pub fn counter_turn() -> std::sync::MutexGuard<'static, ()> {
    static COUNTER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    COUNTER.lock().unwrap_or_else(|p| p.into_inner())
}
