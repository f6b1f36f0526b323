pub mod cnn;
pub mod models;
