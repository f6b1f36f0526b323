//! `TransactionOps`: burn's default (each read in turn, each waiting for the stream).

use crate::Ascend;
use burn_backend::ops::TransactionOps;

impl TransactionOps<Self> for Ascend {}
