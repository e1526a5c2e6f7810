// network.cpp: the stand-in's network (objects.hpp): the tensors and layers its parser makes of
// a model. The stand-in infers no shape: a graph output the model gives no shape gets one
// dimension, fixed (1) when every input is fixed and dynamic (-1) otherwise, so that the shim
// treats the network as static or dynamic as it would with TensorRT's inferred shapes.

#include "objects.hpp"

#include <string>
#include <utility>

namespace trtb {
namespace TRTB_FAKE {

namespace {

nvinfer1::DataType data_type(int32_t onnx) {
    switch (onnx) {
        case kOnnxFloat16:
            return nvinfer1::DataType::kHALF;
        case kOnnxBfloat16:
            return nvinfer1::DataType::kBF16;
        case kOnnxInt8:
            return nvinfer1::DataType::kINT8;
        case kOnnxUint8:
            return nvinfer1::DataType::kUINT8;
        case kOnnxInt32:
            return nvinfer1::DataType::kINT32;
        case kOnnxInt64:
            return nvinfer1::DataType::kINT64;
        case kOnnxBool:
            return nvinfer1::DataType::kBOOL;
        case kOnnxFloat8E4M3FN:
            return nvinfer1::DataType::kFP8;
        case kOnnxInt4:
            return nvinfer1::DataType::kINT4;
        default:
            return nvinfer1::DataType::kFLOAT;
    }
}

// shape_input reports whether input k of an op is a shape tensor (its values shape the
// output) in TensorRT's ONNX importers.
bool shape_input(const std::string& op, size_t k) {
    if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "Upsample" || op == "OneHot" || op == "TopK") {
        return k == 1;
    }
    if (op == "Slice") {
        return k >= 1;
    }
    if (op == "Range" || op == "ConstantOfShape") {
        return true;
    }
    if (op == "Resize") {
        return k >= 2;
    }
    return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Tensors.

const Context& TensorImpl::network_context(Network& network) {
    return network.impl().context();
}

void TensorImpl::set(const std::vector<int64_t>& dims, nvinfer1::DataType type, bool input, bool output) {
    dims_.nbDims = static_cast<int32_t>(dims.size());
    for (size_t i = 0; i < dims.size() && i < static_cast<size_t>(nvinfer1::Dims::MAX_DIMS); ++i) {
        dims_.d[i] = dims[i];
    }
    type_ = type;
    input_ = input_ || input;
    output_ = output_ || output;
}

bool TensorImpl::dynamic() const {
    if (shape_tensor_) {
        return true;
    }
    for (int32_t i = 0; i < dims_.nbDims; ++i) {
        if (dims_.d[i] < 0) {
            return true;
        }
    }
    return false;
}

#if TRTB_SHIM_MAJOR == 10
void TensorImpl::setType(nvinfer1::DataType type) noexcept {
    if (network_.impl().strongly_typed()) {
        network_.impl().context().error(ErrorCode::kINVALID_ARGUMENT, "ITensor::setType", "API Usage Error",
                                        "setType cannot be called on a strongly typed network (tensor " + name_ + ")");
        return;
    }
    if (!input_ && !output_) {
        network_.impl().context().error(ErrorCode::kINVALID_ARGUMENT, "ITensor::setType", "API Usage Error",
                                        "setType only sets the type of a network input or output (tensor " + name_ + ")");
        return;
    }
    type_ = type;
}
#endif

// ---------------------------------------------------------------------------------------------
// Layers.

LayerImpl::LayerImpl(Network& network, std::string name, std::string op)
    : VLayerStubs(network.impl().context()), network_(network), name_(std::move(name)), op_(std::move(op)) {}

nvinfer1::ITensor* LayerImpl::getInput(int32_t index) const noexcept {
    return index >= 0 && static_cast<size_t>(index) < inputs_.size() ? inputs_[static_cast<size_t>(index)] : nullptr;
}

nvinfer1::ITensor* LayerImpl::getOutput(int32_t index) const noexcept {
    return index >= 0 && static_cast<size_t>(index) < outputs_.size() ? outputs_[static_cast<size_t>(index)] : nullptr;
}

#if TRTB_SHIM_MAJOR == 10
void LayerImpl::setPrecision(nvinfer1::DataType type) noexcept {
    if (network_.impl().strongly_typed()) {
        network_.impl().context().error(ErrorCode::kINVALID_ARGUMENT, "ILayer::setPrecision", "API Usage Error",
                                        "setPrecision cannot be called on a strongly typed network (layer " + name_ + ")");
        return;
    }
    precision_ = type;
    precision_set_ = true;
}
#endif

// ---------------------------------------------------------------------------------------------
// The network.

nvinfer1::ITensor* NetworkImpl::getInput(int32_t index) const noexcept {
    return index >= 0 && static_cast<size_t>(index) < inputs_.size() ? inputs_[static_cast<size_t>(index)] : nullptr;
}

nvinfer1::ITensor* NetworkImpl::getOutput(int32_t index) const noexcept {
    return index >= 0 && static_cast<size_t>(index) < outputs_.size() ? outputs_[static_cast<size_t>(index)] : nullptr;
}

nvinfer1::ILayer* NetworkImpl::getLayer(int32_t index) const noexcept {
    return index >= 0 && static_cast<size_t>(index) < layers_.size() ? layers_[static_cast<size_t>(index)].get() : nullptr;
}

Tensor* NetworkImpl::tensor(const std::string& name) {
    std::unique_ptr<Tensor>& t = tensors_[name];
    if (t == nullptr) {
        t = std::make_unique<Tensor>(owner_, name);
    }
    return t.get();
}

bool NetworkImpl::fill(Model model, std::string* why) {
    if (filled_) {
        *why = "the network was already filled by a parse";
        return false;
    }
    bool all_fixed = true;
    for (const Value& v : model.inputs) {
        if (!v.has_shape) {
            *why = "input " + v.name + " has no shape";
            return false;
        }
        Tensor* t = tensor(v.name);
        t->impl().set(v.dims, data_type(v.type), true, false);
        inputs_.push_back(t);
    }
    for (const Initializer& i : model.initializers) {
        Tensor* t = tensor(i.name);
        t->impl().set(i.dims, data_type(i.type), false, false);
        layers_.push_back(std::make_unique<Layer>(owner_, i.name, "Constant"));
        layers_.back()->impl().add_output(t);
    }
    for (size_t n = 0; n < model.nodes.size(); ++n) {
        const Node& node = model.nodes[n];
        layers_.push_back(std::make_unique<Layer>(owner_, node_name(model, n), node.op));
        LayerImpl& layer = layers_.back()->impl();
        for (size_t k = 0; k < node.inputs.size(); ++k) {
            if (node.inputs[k].empty()) {
                continue;  // an optional input left out
            }
            Tensor* t = tensor(node.inputs[k]);
            if (t->impl().isNetworkInput() && shape_input(node.op, k) &&
                (t->impl().getType() == nvinfer1::DataType::kINT64 || t->impl().getType() == nvinfer1::DataType::kINT32)) {
                t->impl().set_shape_tensor();
            }
            layer.add_input(t);
        }
        for (const std::string& o : node.outputs) {
            Tensor* t = tensor(o);
            const bool integer = node.op == "Shape" || node.op == "ArgMax" || node.op == "ArgMin" || node.op == "NonZero";
            t->impl().set({}, integer ? nvinfer1::DataType::kINT64 : nvinfer1::DataType::kFLOAT, false, false);
            layer.add_output(t);
        }
    }
    for (Tensor* t : inputs_) {
        all_fixed = all_fixed && !t->impl().dynamic();
    }
    for (const Value& v : model.outputs) {
        Tensor* t = tensor(v.name);
        std::vector<int64_t> dims = v.dims;
        if (!v.has_shape) {
            dims = {all_fixed ? 1 : -1};
        }
        t->impl().set(dims, v.type != kOnnxUndefined ? data_type(v.type) : t->impl().getType(), false, true);
        outputs_.push_back(t);
    }
    model_ = std::move(model);
    filled_ = true;
    return true;
}

}  // namespace TRTB_FAKE
}  // namespace trtb
