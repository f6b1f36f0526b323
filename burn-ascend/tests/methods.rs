//! Every device method against burn-ndarray on random inputs, generated from one table:
//! the operators × the input layouts (plain, broadcast, transposed view, strided slice
//! view) × the dtypes each operator takes. Floats agree within a relative 1e-4 (the
//! device rounds its transcendental functions differently), integers and booleans
//! exactly.

mod common;

use burn::tensor::backend::Backend;
use burn::tensor::{BasicOps, Bool, IndexingUpdateOp, Int, Tensor, TensorData, s};
use burn_ascend::{Ascend, AscendDevice};
use burn_ndarray::NdArray;
use common::models::Lcg;

/// How an input is laid out on the device before the operator sees it.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Contiguous, `[4, 6]` and `[4, 6]`.
    Plain,
    /// `[4, 6]` with a `[1, 6]` second operand (broadcast).
    Broadcast,
    /// A transposed view of a `[6, 4]` tensor.
    Transposed,
    /// Every other row of an `[8, 7]` tensor, columns 1.., a strided view.
    Sliced,
}

const LAYOUTS: [Layout; 4] = [
    Layout::Plain,
    Layout::Broadcast,
    Layout::Transposed,
    Layout::Sliced,
];

/// The float operators, each with its input range.
const FLOAT_OPS: &[(&str, f32)] = &[
    ("add", 3.0),
    ("sub", 3.0),
    ("mul", 3.0),
    ("div", 3.0),
    ("add_scalar", 3.0),
    ("sub_scalar", 3.0),
    ("mul_scalar", 3.0),
    ("div_scalar", 3.0),
    ("neg", 3.0),
    ("recip", 3.0),
    ("exp", 3.0),
    ("log", 3.0),
    ("sqrt", 3.0),
    ("abs", 3.0),
    ("sin", 3.0),
    ("cos", 3.0),
    ("tanh", 3.0),
    ("erf", 3.0),
    ("floor", 3.0),
    ("ceil", 3.0),
    ("round", 3.0),
    ("relu", 3.0),
    ("sigmoid", 3.0),
    ("softmax", 3.0),
    ("log_softmax", 3.0),
    ("powf_scalar", 3.0),
    ("square", 3.0),
    ("powf", 2.0),
    ("clamp", 3.0),
    ("clamp_min", 3.0),
    ("mask_where", 3.0),
    ("mask_fill", 3.0),
    ("sum", 3.0),
    ("sum_dim", 3.0),
    ("mean", 3.0),
    ("mean_dim", 3.0),
    ("max_dim", 3.0),
    ("argmax", 3.0),
    ("matmul", 3.0),
    ("gather", 3.0),
    ("scatter_add", 3.0),
    ("select", 3.0),
    ("select_add", 3.0),
    ("cat", 3.0),
    ("slice_assign", 3.0),
    ("swap_dims", 3.0),
    ("reshape", 3.0),
    ("expand", 3.0),
    ("greater", 3.0),
    ("greater_equal", 3.0),
    ("lower", 3.0),
    ("lower_equal", 3.0),
    ("equal", 3.0),
    ("greater_elem", 3.0),
    ("lower_elem", 3.0),
    ("lower_equal_elem", 3.0),
    ("greater_equal_elem", 3.0),
    ("equal_elem", 3.0),
    ("into_int", 3.0),
    ("zeros_like", 3.0),
    ("ones_like", 3.0),
    ("full_like", 3.0),
];

/// The int operators (i64 and i32).
const INT_OPS: &[&str] = &[
    "add",
    "sub",
    "mul",
    "add_scalar",
    "sub_scalar",
    "mul_scalar",
    "neg",
    "abs",
    "clamp",
    "mask_where",
    "mask_fill",
    "sum",
    "sum_dim",
    "max_dim",
    "argmax",
    "cat",
    "gather",
    "scatter_add",
    "select",
    "select_add",
    "slice_assign",
    "swap_dims",
    "reshape",
    "expand",
    "greater",
    "lower",
    "equal",
    "greater_elem",
    "lower_elem",
    "equal_elem",
    "into_float",
];

/// The bool operators.
const BOOL_OPS: &[&str] = &[
    "not",
    "and",
    "or",
    "equal",
    "into_int",
    "into_float",
    "cat",
    "swap_dims",
    "mask_where",
    "mask_fill",
];

/// Values for `layout`: the raw buffers and shapes of both operands.
fn inputs(layout: Layout, seed: u64, range: f32) -> [(Vec<f32>, [usize; 2]); 2] {
    let mut rng = Lcg::new(seed);
    let (sa, sb) = match layout {
        Layout::Plain => ([4, 6], [4, 6]),
        Layout::Broadcast => ([4, 6], [1, 6]),
        Layout::Transposed => ([6, 4], [6, 4]),
        Layout::Sliced => ([8, 7], [8, 7]),
    };
    let a = rng.uniform(sa[0] * sa[1], range);
    let b = rng.uniform(sb[0] * sb[1], range);
    [(a, sa), (b, sb)]
}

/// The operand as the operator sees it: `[4, 6]` (or `[1, 6]`) through `layout`'s view.
fn view<B: Backend, K: BasicOps<B>>(t: Tensor<B, 2, K>, layout: Layout) -> Tensor<B, 2, K> {
    match layout {
        Layout::Plain | Layout::Broadcast => t,
        Layout::Transposed => t.transpose(),
        Layout::Sliced => t.slice(s![0..8;2, 1..7]),
    }
}

fn floats<B: Backend>(
    layout: Layout,
    seed: u64,
    range: f32,
    device: &B::Device,
) -> (Tensor<B, 2>, Tensor<B, 2>) {
    let [(a, sa), (b, sb)] = inputs(layout, seed, range);
    let a = view(Tensor::from_data(TensorData::new(a, sa), device), layout);
    let b = view(Tensor::from_data(TensorData::new(b, sb), device), layout);
    (a, b)
}

/// Index tensors for `[4, 6]` operands on `device`: `[4, 3]` column indices (gather),
/// `[3, 6]` row indices (scatter-add), and 1-D column and row indices with repeats.
fn indices<B: Backend>(device: &B::Device) -> [Tensor<B, 2, Int>; 2] {
    let columns = [[5i64, 0, 5], [1, 1, 2], [3, 4, 0], [2, 2, 2]];
    let rows = [
        [3i64, 0, 1, 1, 2, 3],
        [3, 3, 0, 2, 2, 1],
        [0, 0, 0, 3, 1, 2],
    ];
    [
        Tensor::from_data(columns, device),
        Tensor::from_data(rows, device),
    ]
}

fn index_list<B: Backend>(values: [i64; 4], device: &B::Device) -> Tensor<B, 1, Int> {
    Tensor::from_data(values, device)
}

/// A float operator; its result's data.
fn float_op<B: Backend>(op: &str, a: Tensor<B, 2>, b: Tensor<B, 2>) -> TensorData {
    let pos = |t: Tensor<B, 2>| t.abs() + 0.25;
    match op {
        "add" => (a + b).into_data(),
        "sub" => (a - b).into_data(),
        "mul" => (a * b).into_data(),
        "div" => (a / pos(b)).into_data(),
        "add_scalar" => (a + 1.5).into_data(),
        "sub_scalar" => (a - 1.5).into_data(),
        "mul_scalar" => (a * -2.5).into_data(),
        "div_scalar" => (a / 4.0).into_data(),
        "neg" => (-a).into_data(),
        "recip" => pos(a).recip().into_data(),
        "exp" => a.exp().into_data(),
        "log" => pos(a).log().into_data(),
        "sqrt" => pos(a).sqrt().into_data(),
        "abs" => a.abs().into_data(),
        "sin" => a.sin().into_data(),
        "cos" => a.cos().into_data(),
        "tanh" => a.tanh().into_data(),
        "erf" => a.erf().into_data(),
        "floor" => a.floor().into_data(),
        "ceil" => a.ceil().into_data(),
        "round" => a.round().into_data(),
        "relu" => burn::tensor::activation::relu(a).into_data(),
        "sigmoid" => burn::tensor::activation::sigmoid(a).into_data(),
        "softmax" => burn::tensor::activation::softmax(a, 1).into_data(),
        "log_softmax" => burn::tensor::activation::log_softmax(a, 0).into_data(),
        "powf_scalar" => pos(a).powf_scalar(1.5).into_data(),
        "square" => a.powi_scalar(2).into_data(),
        "powf" => pos(a).powf(b).into_data(),
        "clamp" => a.clamp(-1.0, 0.5).into_data(),
        "mask_where" => a.clone().mask_where(a.greater(b.clone()), b).into_data(),
        "mask_fill" => a.clone().mask_fill(b.lower_elem(0.0), -7.5).into_data(),
        "clamp_min" => a.clamp_min(0.25).into_data(),
        "sum" => a.sum().into_data(),
        "sum_dim" => a.sum_dim(1).into_data(),
        "mean" => a.mean().into_data(),
        "mean_dim" => a.mean_dim(0).into_data(),
        "max_dim" => a.max_dim(1).into_data(),
        "argmax" => a.argmax(1).into_data(),
        "matmul" => a.matmul(b.transpose()).into_data(),
        "gather" => {
            let [columns, _] = indices::<B>(&a.device());
            a.gather(1, columns).into_data()
        }
        "scatter_add" => {
            let [_, rows] = indices::<B>(&a.device());
            let value = a.clone().slice(s![1..4, ..]) * 2.0;
            a.scatter(0, rows, value, IndexingUpdateOp::Add).into_data()
        }
        "select" => {
            let device = a.device();
            a.select(1, index_list::<B>([2, 0, 5, 5], &device))
                .into_data()
        }
        "select_add" => {
            let device = a.device();
            let value = a.clone().slice(s![0..4, 1..4]);
            a.select_assign(
                1,
                index_list::<B>([4, 0, 4, 1], &device).slice(s![0..3]),
                value,
                IndexingUpdateOp::Add,
            )
            .into_data()
        }
        "cat" => Tensor::cat(vec![a, b.clone(), b], 0).into_data(),
        "slice_assign" => a
            .slice_assign(s![1..3, 2..5], b.slice(s![0..1, 0..3]).expand([2, 3]))
            .into_data(),
        "swap_dims" => (a.swap_dims(0, 1) * 2.0).into_data(),
        "reshape" => a.reshape([3, -1]).into_data(),
        "expand" => a.slice(s![0..1, ..]).expand([3, 6]).into_data(),
        "greater" => a.greater(b).into_data(),
        "greater_equal" => a.greater_equal(b).into_data(),
        "lower" => a.lower(b).into_data(),
        "lower_equal" => a.lower_equal(b).into_data(),
        "equal" => a.clone().equal(a.clamp(-1.0, 1.0)).into_data(),
        "greater_elem" => a.greater_elem(0.5).into_data(),
        "lower_elem" => a.lower_elem(0.5).into_data(),
        "lower_equal_elem" => a.round().lower_equal_elem(1.0).into_data(),
        "greater_equal_elem" => a.round().greater_equal_elem(1.0).into_data(),
        "equal_elem" => a.round().equal_elem(1.0).into_data(),
        "into_int" => a.int().into_data(),
        "zeros_like" => a.zeros_like().into_data(),
        "ones_like" => a.ones_like().into_data(),
        "full_like" => a.full_like(3.25).into_data(),
        other => panic!("no float op {other}"),
    }
}

fn ints<B: Backend>(
    layout: Layout,
    seed: u64,
    device: &B::Device,
    dtype: burn::tensor::DType,
) -> (Tensor<B, 2, Int>, Tensor<B, 2, Int>) {
    let [(a, sa), (b, sb)] = inputs(layout, seed, 20.0);
    let int = |v: Vec<f32>, s: [usize; 2]| {
        let data = TensorData::new(v.iter().map(|x| x.round() as i64).collect::<Vec<_>>(), s)
            .convert_dtype(dtype);
        view(
            Tensor::<B, 2, Int>::from_data(data, (device, dtype)),
            layout,
        )
    };
    (int(a, sa), int(b, sb))
}

/// An int operator; its result's data.
fn int_op<B: Backend>(op: &str, a: Tensor<B, 2, Int>, b: Tensor<B, 2, Int>) -> TensorData {
    match op {
        "add" => (a + b).into_data(),
        "sub" => (a - b).into_data(),
        "mul" => (a * b).into_data(),
        "add_scalar" => (a + 3).into_data(),
        "sub_scalar" => (a - 3).into_data(),
        "mul_scalar" => (a * -2).into_data(),
        "neg" => (-a).into_data(),
        "abs" => a.abs().into_data(),
        "clamp" => a.clamp(-5, 7).into_data(),
        "mask_where" => a.clone().mask_where(a.greater(b.clone()), b).into_data(),
        "mask_fill" => a.clone().mask_fill(b.lower_elem(0), 9).into_data(),
        "sum" => a.sum().into_data(),
        "sum_dim" => a.sum_dim(0).into_data(),
        "max_dim" => a.max_dim(1).into_data(),
        "argmax" => a.argmax(1).into_data(),
        "cat" => Tensor::cat(vec![a, b], 0).into_data(),
        "gather" => {
            let [columns, _] = indices::<B>(&a.device());
            a.gather(1, columns).into_data()
        }
        "scatter_add" => {
            let [_, rows] = indices::<B>(&a.device());
            let value = a.clone().slice(s![0..3, ..]) - 4;
            a.scatter(0, rows, value, IndexingUpdateOp::Add).into_data()
        }
        "select" => {
            let device = a.device();
            a.select(0, index_list::<B>([3, 3, 0, 1], &device))
                .into_data()
        }
        "select_add" => {
            let device = a.device();
            let value = a.clone().slice(s![0..4, 0..2]) * 3;
            a.select_assign(
                1,
                index_list::<B>([5, 5, 0, 0], &device).slice(s![1..3]),
                value,
                IndexingUpdateOp::Add,
            )
            .into_data()
        }
        "slice_assign" => a
            .slice_assign(s![0..2, 1..3], b.slice(s![0..1, 0..2]).expand([2, 2]))
            .into_data(),
        "swap_dims" => (a.swap_dims(0, 1) + 1).into_data(),
        "reshape" => a.reshape([2, 12]).into_data(),
        "expand" => a.slice(s![1..2, ..]).expand([2, 4, 6]).into_data(),
        "greater" => a.greater(b).into_data(),
        "lower" => a.lower(b).into_data(),
        "equal" => a.clone().equal(a.clamp(-5, 5)).into_data(),
        "greater_elem" => a.greater_elem(2).into_data(),
        "lower_elem" => a.lower_elem(2).into_data(),
        "equal_elem" => a.equal_elem(2).into_data(),
        "into_float" => a.float().into_data(),
        other => panic!("no int op {other}"),
    }
}

fn bools<B: Backend>(
    layout: Layout,
    seed: u64,
    device: &B::Device,
) -> (Tensor<B, 2, Bool>, Tensor<B, 2, Bool>) {
    let (a, b) = floats::<B>(layout, seed, 1.0, device);
    (a.greater_elem(0.0), b.greater_elem(0.0))
}

fn bool_op<B: Backend>(op: &str, a: Tensor<B, 2, Bool>, b: Tensor<B, 2, Bool>) -> TensorData {
    match op {
        "not" => a.bool_not().into_data(),
        "and" => a.bool_and(b).into_data(),
        "or" => a.bool_or(b).into_data(),
        "equal" => a.equal(b).into_data(),
        "into_int" => a.int().into_data(),
        "into_float" => a.float().into_data(),
        "cat" => Tensor::cat(vec![a, b], 0).into_data(),
        "swap_dims" => a.swap_dims(0, 1).bool_not().into_data(),
        "mask_where" => a
            .clone()
            .mask_where(a.equal(b.clone()), b.bool_not())
            .into_data(),
        "mask_fill" => a.mask_fill(b, true).into_data(),
        other => panic!("no bool op {other}"),
    }
}

/// Compares the two results: the same dtype and shape; floats within a relative 1e-4,
/// the rest exactly.
fn same(got: TensorData, want: TensorData, what: &str) {
    assert_eq!(got.shape, want.shape, "{what}: shape");
    assert_eq!(got.dtype, want.dtype, "{what}: dtype");
    if want.dtype.is_float() {
        let (g, w) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        for (i, (g, w)) in g.iter().zip(&w).enumerate() {
            assert!(
                (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                "{what}[{i}]: {g} vs {w}"
            );
        }
    } else {
        assert_eq!(got.as_bytes(), want.as_bytes(), "{what}: values");
    }
}

#[test]
fn float_methods_match_ndarray_on_every_layout() {
    let _turn = common::counter_turn();
    let (device, cpu) = (AscendDevice::default(), Default::default());
    let mut cases = 0;
    for (i, &(op, range)) in FLOAT_OPS.iter().enumerate() {
        for (j, &layout) in LAYOUTS.iter().enumerate() {
            let seed = (i * 16 + j) as u64;
            let (a, b) = floats::<Ascend>(layout, seed, range, &device);
            let (ar, br) = floats::<NdArray>(layout, seed, range, &cpu);
            let before = burn_ascend::fallback_count();
            let got = float_op(op, a, b);
            let fallbacks = burn_ascend::fallback_count() - before;
            same(got, float_op(op, ar, br), &format!("{op} {layout:?}"));
            assert_eq!(
                fallbacks,
                0,
                "{op} {layout:?} ran on the host: {:?}",
                burn_ascend::fallback_counts()
            );
            cases += 1;
        }
    }
    assert_eq!(cases, FLOAT_OPS.len() * LAYOUTS.len());
}

#[test]
fn int_methods_match_ndarray_on_every_layout_and_dtype() {
    let _turn = common::counter_turn();
    let (device, cpu) = (AscendDevice::default(), Default::default());
    for dtype in [burn::tensor::DType::I64, burn::tensor::DType::I32] {
        for (i, &op) in INT_OPS.iter().enumerate() {
            for (j, &layout) in LAYOUTS.iter().enumerate() {
                let seed = (i * 16 + j) as u64;
                let (a, b) = ints::<Ascend>(layout, seed, &device, dtype);
                let (ar, br) = ints::<NdArray>(layout, seed, &cpu, dtype);
                let before = burn_ascend::fallback_count();
                let got = int_op(op, a, b);
                let fallbacks = burn_ascend::fallback_count() - before;
                same(
                    got,
                    int_op(op, ar, br),
                    &format!("{op} {layout:?} {dtype:?}"),
                );
                assert_eq!(
                    fallbacks,
                    0,
                    "{op} {layout:?} {dtype:?}: {:?}",
                    burn_ascend::fallback_counts()
                );
            }
        }
    }
}

#[test]
fn bool_methods_match_ndarray_on_every_layout() {
    let _turn = common::counter_turn();
    let (device, cpu) = (AscendDevice::default(), Default::default());
    for (i, &op) in BOOL_OPS.iter().enumerate() {
        for (j, &layout) in LAYOUTS.iter().enumerate() {
            let seed = (i * 16 + j) as u64;
            let (a, b) = bools::<Ascend>(layout, seed, &device);
            let (ar, br) = bools::<NdArray>(layout, seed, &cpu);
            let before = burn_ascend::fallback_count();
            let got = bool_op(op, a, b);
            let fallbacks = burn_ascend::fallback_count() - before;
            same(got, bool_op(op, ar, br), &format!("{op} {layout:?}"));
            assert_eq!(
                fallbacks,
                0,
                "{op} {layout:?}: {:?}",
                burn_ascend::fallback_counts()
            );
        }
    }
}

/// The host fallbacks compute burn-ndarray's results and are counted, each by name.
#[test]
fn host_fallbacks_are_counted_and_match_ndarray() {
    let _turn = common::counter_turn();
    let (device, cpu) = (AscendDevice::default(), Default::default());
    let (a, _) = floats::<Ascend>(Layout::Transposed, 99, 3.0, &device);
    let (ar, _) = floats::<NdArray>(Layout::Transposed, 99, 3.0, &cpu);
    let before = burn_ascend::fallback_count();
    let got = a.clone().cumsum(1).into_data();
    assert!(burn_ascend::fallback_count() > before);
    same(got, ar.clone().cumsum(1).into_data(), "cumsum");
    assert!(
        burn_ascend::fallback_counts()
            .iter()
            .any(|(m, n)| *m == "float_cumsum" && *n > 0)
    );
    same(a.flip([1]).into_data(), ar.flip([1]).into_data(), "flip");
}
