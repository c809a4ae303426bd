//! A shard's fit on a thread of its own, whose exchanges a driver relays.
//!
//! Training on shards ([`crate::booster::TrainingData::on_shard`]) stops at every sum
//! over rows until the other shards' parts are in. [`ShardFit`] runs such a
//! fit on its own thread and turns each of those stops into a [`Message`]:
//! the driver (a Dask client, or a test) collects the same message from
//! every shard, combines them ([`crate::reduce::combine_parts`] and
//! friends) and answers each shard with the combined values. The fit
//! thread waits without holding anything the caller needs; dropping the
//! `ShardFit` stops the fit at its next exchange or node.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::booster::{EvalResult, Monitor, RoundLog, RoundRecord, Trained};
use crate::cancel::Cancel;
use crate::error::{Result, RgbmError};
use crate::reduce::{Op, Reduce, out_of_step};
use crate::tree::Tree;

/// What a shard's fit asks of the driver, or its end.
pub enum Message {
    /// Combine `values` with the other shards' under `op`.
    Combine { op: Op, values: Vec<f64> },
    /// Sum [`crate::exact_sum::ExactSum`] limbs.
    Limbs(Vec<i64>),
    /// Concatenate records of `width` values in the order of their first.
    Gather { width: usize, records: Vec<f64> },
    /// Round `round` is finished, with its evaluation results and its
    /// record (what a resumed fit takes back): continue (false) or stop
    /// (true)?
    Round(usize, Vec<EvalResult>, Box<RoundRecord>),
    /// The fit ended.
    Done(Result<Box<Trained>>),
}

/// The driver's answer to a [`Message`].
#[derive(Debug)]
pub enum Reply {
    Values(Vec<f64>),
    Limbs(Vec<i64>),
    /// The answer to `Round`: stop training after this round.
    Stop(bool),
}

/// The fit thread's end of the relay.
struct Link {
    to_driver: Mutex<Sender<Message>>,
    from_driver: Mutex<Receiver<Reply>>,
}

impl Link {
    fn ask(&self, m: Message) -> Result<Reply> {
        let stopped = || RgbmError::Interrupted;
        let to = self.to_driver.lock().map_err(|_| stopped())?;
        let from = self.from_driver.lock().map_err(|_| stopped())?;
        to.send(m).map_err(|_| stopped())?;
        from.recv().map_err(|_| stopped())
    }
}

impl Reduce for Link {
    fn is_local(&self) -> bool {
        false
    }
    fn combine(&self, op: Op, values: &mut [f64]) -> Result<()> {
        let m = Message::Combine {
            op,
            values: values.to_vec(),
        };
        match self.ask(m)? {
            Reply::Values(v) if v.len() == values.len() => {
                values.copy_from_slice(&v);
                Ok(())
            }
            _ => Err(out_of_step()),
        }
    }
    fn combine_limbs(&self, limbs: &mut [i64]) -> Result<()> {
        match self.ask(Message::Limbs(limbs.to_vec()))? {
            Reply::Limbs(v) if v.len() == limbs.len() => {
                limbs.copy_from_slice(&v);
                Ok(())
            }
            _ => Err(out_of_step()),
        }
    }
    fn gather(&self, records: &[f64], width: usize) -> Result<Vec<f64>> {
        let m = Message::Gather {
            width,
            records: records.to_vec(),
        };
        match self.ask(m)? {
            Reply::Values(v) if v.len() % width.max(1) == 0 => Ok(v),
            _ => Err(out_of_step()),
        }
    }
}

/// The monitor of a shard's fit: the driver decides after every round
/// whether to go on; `cancel` stops growth between nodes.
struct RoundMonitor<'a> {
    link: &'a Link,
    cancel: Cancel,
    /// The round just trained, until `after_round` sends it.
    record: Option<RoundRecord>,
}

impl Monitor for RoundMonitor<'_> {
    fn cancel(&self) -> Cancel {
        self.cancel.clone()
    }
    fn before_round(&mut self, _round: usize) -> Result<()> {
        self.cancel.check()
    }
    fn round_trained(&mut self, round: usize, trees: &[Tree], log: &RoundLog) -> Result<()> {
        self.record = Some(RoundRecord {
            round,
            trees: trees.to_vec(),
            log: log.clone(),
        });
        Ok(())
    }
    fn after_round(&mut self, round: usize, results: &[EvalResult]) -> Result<bool> {
        let record = self.record.take().ok_or_else(out_of_step)?;
        let m = Message::Round(round, results.to_vec(), Box::new(record));
        match self.link.ask(m)? {
            Reply::Stop(stop) => Ok(stop),
            _ => Err(out_of_step()),
        }
    }
}

/// What a shard's fit runs: training on its rows with the given reduction
/// and monitor (typically a closure around [`crate::booster::train`] of a shard).
pub type ShardTraining =
    Box<dyn FnOnce(&dyn Reduce, &mut dyn Monitor) -> Result<Trained> + Send + 'static>;

/// A shard's fit running on its own thread (see the module docs).
pub struct ShardFit {
    to_fit: Option<Sender<Reply>>,
    from_fit: Mutex<Receiver<Message>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ShardFit {
    /// Starts `training` on a new thread; [`ShardFit::first`] returns its
    /// first message.
    pub fn start(training: ShardTraining) -> Result<ShardFit> {
        let (to_driver, from_fit) = channel();
        let (to_fit, from_driver) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let cancel = Cancel::on(stop.clone());
        let done = to_driver.clone();
        let link = Link {
            to_driver: Mutex::new(to_driver),
            from_driver: Mutex::new(from_driver),
        };
        let thread = std::thread::Builder::new()
            .name("rgbm-shard-fit".into())
            .spawn(move || {
                let mut monitor = RoundMonitor {
                    link: &link,
                    cancel,
                    record: None,
                };
                let run = std::panic::AssertUnwindSafe(|| training(&link, &mut monitor));
                let result = std::panic::catch_unwind(run)
                    .unwrap_or_else(|_| {
                        Err(RgbmError::Callback(
                            "internal error: the shard's fit panicked; please report this".into(),
                        ))
                    })
                    .map(Box::new);
                // The driver may be gone: nobody is left to tell.
                let _ = done.send(Message::Done(result));
            })
            .map_err(|e| RgbmError::OutOfMemory(format!("cannot start the shard's fit: {e}")))?;
        Ok(ShardFit {
            to_fit: Some(to_fit),
            from_fit: Mutex::new(from_fit),
            stop,
            thread: Some(thread),
        })
    }

    /// The fit's next message (after its start or the last reply).
    pub fn first(&self) -> Result<Message> {
        let from = self.from_fit.lock().map_err(|_| RgbmError::Interrupted)?;
        from.recv().map_err(|_| RgbmError::Interrupted)
    }

    /// Answers the last message and waits for the next one.
    pub fn reply(&self, reply: Reply) -> Result<Message> {
        let to = self.to_fit.as_ref().ok_or(RgbmError::Interrupted)?;
        to.send(reply).map_err(|_| RgbmError::Interrupted)?;
        self.first()
    }
}

impl Drop for ShardFit {
    /// Stops the fit (at its next exchange or node) and waits for its thread.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.to_fit = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Drives `shards` to the end in this thread (every shard's fit must be
/// started): relays each exchange and answers every round with `stop`,
/// which sees the round's record (the first shard's). Returns each shard's
/// result. For tests and single-process use.
pub fn drive(
    shards: &[ShardFit],
    mut stop: impl FnMut(&RoundRecord) -> bool,
) -> Vec<Result<Trained>> {
    let mut msgs: Vec<Message> = shards
        .iter()
        .map(|s| s.first().unwrap_or_else(|e| Message::Done(Err(e))))
        .collect();
    loop {
        if msgs.iter().all(|m| matches!(m, Message::Done(_))) {
            return msgs
                .into_iter()
                .map(|m| match m {
                    Message::Done(r) => r.map(|b| *b),
                    _ => unreachable!(),
                })
                .collect();
        }
        let reply = combine_messages(&msgs, &mut stop);
        msgs = shards
            .iter()
            .zip(msgs)
            .map(|(s, m)| match (m, &reply) {
                (Message::Done(r), _) => Message::Done(r),
                (_, Ok(reply)) => s
                    .reply(clone_reply(reply))
                    .unwrap_or_else(|e| Message::Done(Err(e))),
                // Out of step: stop every shard.
                (_, Err(e)) => Message::Done(Err(RgbmError::Shape(e.to_string()))),
            })
            .collect();
    }
}

fn clone_reply(r: &Reply) -> Reply {
    match r {
        Reply::Values(v) => Reply::Values(v.clone()),
        Reply::Limbs(v) => Reply::Limbs(v.clone()),
        Reply::Stop(s) => Reply::Stop(*s),
    }
}

/// The combined answer to one message from every shard.
fn combine_messages(
    msgs: &[Message],
    stop: &mut impl FnMut(&RoundRecord) -> bool,
) -> Result<Reply> {
    use crate::reduce::{combine_parts, gather_parts};
    match &msgs[0] {
        Message::Combine { op, .. } => {
            let parts = msgs
                .iter()
                .map(|m| match m {
                    Message::Combine { op: o, values } if o == op => Ok(values.clone()),
                    _ => Err(out_of_step()),
                })
                .collect::<Result<Vec<_>>>()?;
            combine_parts(*op, &parts).map(Reply::Values)
        }
        Message::Limbs(first) => {
            let mut sum = vec![0i64; first.len()];
            for m in msgs {
                match m {
                    Message::Limbs(l) if l.len() == sum.len() => {
                        sum.iter_mut().zip(l).for_each(|(s, v)| *s += v)
                    }
                    _ => return Err(out_of_step()),
                }
            }
            Ok(Reply::Limbs(sum))
        }
        Message::Gather { width, .. } => {
            let parts = msgs
                .iter()
                .map(|m| match m {
                    Message::Gather { width: w, records } if w == width => Ok(records.clone()),
                    _ => Err(out_of_step()),
                })
                .collect::<Result<Vec<_>>>()?;
            gather_parts(&parts, *width).map(Reply::Values)
        }
        Message::Round(r, _, record) => {
            if msgs
                .iter()
                .any(|m| !matches!(m, Message::Round(x, _, _) if x == r))
            {
                return Err(out_of_step());
            }
            Ok(Reply::Stop(stop(record)))
        }
        Message::Done(_) => Err(out_of_step()),
    }
}
