// Our own declarations of the WebGPU C API compute subset implemented by Dawn's
// libwebgpu_wrapper.so (npm bun-webgpu-linux-x64@0.1.7), written from
// ../shared/spec/DAWN_ABI.md. No Dawn header ships with the library, so every struct
// size and key offset is pinned by static_assert: a wrong layout shifts every later
// argument silently. Only src/gpu/dawn_surface.cpp includes this file.
#pragma once
#include <cstddef>
#include <cstdint>

extern "C" {

typedef uint32_t WGPUBool;
typedef uint64_t WGPUFlags;
typedef WGPUFlags WGPUBufferUsage;
typedef WGPUFlags WGPUMapMode;
typedef WGPUFlags WGPUShaderStage;
typedef uint32_t WGPUEnum;  // every C enum of the API is a 4-byte integer

typedef struct WGPUInstanceImpl* WGPUInstance;
typedef struct WGPUAdapterImpl* WGPUAdapter;
typedef struct WGPUDeviceImpl* WGPUDevice;
typedef struct WGPUQueueImpl* WGPUQueue;
typedef struct WGPUBufferImpl* WGPUBuffer;
typedef struct WGPUShaderModuleImpl* WGPUShaderModule;
typedef struct WGPUComputePipelineImpl* WGPUComputePipeline;
typedef struct WGPUBindGroupLayoutImpl* WGPUBindGroupLayout;
typedef struct WGPUPipelineLayoutImpl* WGPUPipelineLayout;
typedef struct WGPUBindGroupImpl* WGPUBindGroup;
typedef struct WGPUCommandEncoderImpl* WGPUCommandEncoder;
typedef struct WGPUCommandBufferImpl* WGPUCommandBuffer;
typedef struct WGPUComputePassEncoderImpl* WGPUComputePassEncoder;
typedef struct WGPUQuerySetImpl* WGPUQuerySet;
typedef void* WGPUSurface;
typedef void* WGPUSampler;
typedef void* WGPUTextureView;

constexpr size_t WGPU_STRLEN = SIZE_MAX;
constexpr uint64_t WGPU_WHOLE_SIZE = UINT64_MAX;
constexpr size_t WGPU_WHOLE_MAP_SIZE = SIZE_MAX;
constexpr uint32_t WGPU_QUERY_SET_INDEX_UNDEFINED = UINT32_MAX;

// Enum values (DAWN_ABI.md §3). Every status enum starts at 1 (Success).
enum : WGPUEnum { WGPUStatus_Success = 1 };
enum : WGPUEnum { WGPUWaitStatus_Success = 1, WGPUWaitStatus_TimedOut = 2, WGPUWaitStatus_Error = 3 };
enum : WGPUEnum { WGPUCallbackMode_WaitAnyOnly = 1, WGPUCallbackMode_AllowProcessEvents = 2,
                  WGPUCallbackMode_AllowSpontaneous = 3 };
enum : WGPUEnum { WGPURequestAdapterStatus_Success = 1 };
enum : WGPUEnum { WGPURequestDeviceStatus_Success = 1 };
enum : WGPUEnum { WGPUMapAsyncStatus_Success = 1 };
enum : WGPUEnum { WGPUPopErrorScopeStatus_Success = 1 };
enum : WGPUEnum { WGPUQueueWorkDoneStatus_Success = 1 };
enum : WGPUEnum { WGPUCreatePipelineAsyncStatus_Success = 1 };
enum : WGPUEnum { WGPUErrorType_NoError = 1, WGPUErrorType_Validation = 2, WGPUErrorType_OutOfMemory = 3,
                  WGPUErrorType_Internal = 4, WGPUErrorType_Unknown = 5 };
enum : WGPUEnum { WGPUErrorFilter_Validation = 1, WGPUErrorFilter_OutOfMemory = 2, WGPUErrorFilter_Internal = 3 };
enum : WGPUEnum { WGPUBackendType_Null = 1, WGPUBackendType_Vulkan = 6 };
enum : WGPUEnum { WGPUAdapterType_DiscreteGPU = 1, WGPUAdapterType_IntegratedGPU = 2, WGPUAdapterType_CPU = 3,
                  WGPUAdapterType_Unknown = 4 };
enum : WGPUEnum { WGPUPowerPreference_HighPerformance = 2 };
enum : WGPUEnum { WGPUQueryType_Timestamp = 2 };
enum : WGPUEnum { WGPUFeatureName_TimestampQuery = 0x03, WGPUFeatureName_ShaderF16 = 0x0A,
                  WGPUFeatureName_Subgroups = 0x11, WGPUFeatureName_AdapterPropertiesMemoryHeaps = 0x50015 };
// AdapterPropertiesMemoryHeaps is not in DAWN_ABI.md: 0x00050013 was found by asking this library
// (0x00050014 is AdapterPropertiesD3D here: "Feature AdapterPropertiesD3D is not available").
// DawnCacheDeviceDescriptor is not in DAWN_ABI.md either: 0x00050007, three below the toggles as in
// Dawn's generated headers of 2024-2025, was confirmed on this library: a device chained with it is
// created and calls both functions (tests/gpu/pipeline_cache_test.cpp).
enum : WGPUEnum { WGPUSType_ShaderSourceWGSL = 0x00000002, WGPUSType_DawnCacheDeviceDescriptor = 0x00050007,
                  WGPUSType_DawnTogglesDescriptor = 0x0005000A, WGPUSType_AdapterPropertiesMemoryHeaps = 0x00050013 };
enum : WGPUEnum { WGPUCompilationMessageType_Error = 1 };
// Not in DAWN_ABI.md: webgpu.h's WGPUWGSLLanguageFeatureName_Packed4x8IntegerDotProduct; confirmed on
// this library by compiling dot4I8Packed where it is reported (tests/gpu/context_test.cpp).
enum : WGPUEnum { WGPUWGSLLanguageFeatureName_Packed4x8IntegerDotProduct = 0x00000002 };

constexpr WGPUBufferUsage WGPUBufferUsage_MapRead = 0x1, WGPUBufferUsage_MapWrite = 0x2, WGPUBufferUsage_CopySrc = 0x4,
                          WGPUBufferUsage_CopyDst = 0x8, WGPUBufferUsage_Uniform = 0x40,
                          WGPUBufferUsage_Storage = 0x80, WGPUBufferUsage_QueryResolve = 0x200;
constexpr WGPUMapMode WGPUMapMode_Read = 0x1, WGPUMapMode_Write = 0x2;
constexpr WGPUFlags WGPUHeapProperty_DeviceLocal = 0x1;

struct WGPUStringView { const char* data; size_t length; };
struct WGPUChainedStruct { WGPUChainedStruct* next; WGPUEnum sType; };
struct WGPUFuture { uint64_t id; };
struct WGPUFutureWaitInfo { WGPUFuture future; WGPUBool completed; };

struct WGPUInstanceCapabilities {
  WGPUChainedStruct* nextInChain; WGPUBool timedWaitAnyEnable; size_t timedWaitAnyMaxCount;
};
struct WGPUInstanceDescriptor { WGPUChainedStruct* nextInChain; WGPUInstanceCapabilities capabilities; };

struct WGPURequestAdapterOptions {
  WGPUChainedStruct* nextInChain; WGPUEnum featureLevel; WGPUEnum powerPreference;
  WGPUBool forceFallbackAdapter; WGPUEnum backendType; WGPUSurface compatibleSurface;
};
struct WGPUAdapterInfo {
  WGPUChainedStruct* nextInChain; WGPUStringView vendor; WGPUStringView architecture;
  WGPUStringView device; WGPUStringView description; WGPUEnum backendType; WGPUEnum adapterType;
  uint32_t vendorID; uint32_t deviceID; uint32_t subgroupMinSize; uint32_t subgroupMaxSize;
};
struct WGPUSupportedFeatures { size_t featureCount; const WGPUEnum* features; };
// Chained on WGPUAdapterInfo (the adapter must have the feature); the library owns heapInfo.
struct WGPUMemoryHeapInfo { WGPUFlags properties; uint64_t size; };
struct WGPUAdapterPropertiesMemoryHeaps {
  WGPUChainedStruct chain; size_t heapCount; const WGPUMemoryHeapInfo* heapInfo;
};
struct WGPULimits {
  WGPUChainedStruct* nextInChain;
  uint32_t maxTextureDimension1D, maxTextureDimension2D, maxTextureDimension3D, maxTextureArrayLayers;
  uint32_t maxBindGroups, maxBindGroupsPlusVertexBuffers, maxBindingsPerBindGroup;
  uint32_t maxDynamicUniformBuffersPerPipelineLayout, maxDynamicStorageBuffersPerPipelineLayout;
  uint32_t maxSampledTexturesPerShaderStage, maxSamplersPerShaderStage, maxStorageBuffersPerShaderStage;
  uint32_t maxStorageTexturesPerShaderStage, maxUniformBuffersPerShaderStage;
  uint64_t maxUniformBufferBindingSize, maxStorageBufferBindingSize;
  uint32_t minUniformBufferOffsetAlignment, minStorageBufferOffsetAlignment, maxVertexBuffers;
  uint64_t maxBufferSize;
  uint32_t maxVertexAttributes, maxVertexBufferArrayStride, maxInterStageShaderVariables;
  uint32_t maxColorAttachments, maxColorAttachmentBytesPerSample, maxComputeWorkgroupStorageSize;
  uint32_t maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupSizeX, maxComputeWorkgroupSizeY;
  uint32_t maxComputeWorkgroupSizeZ, maxComputeWorkgroupsPerDimension, maxImmediateSize;
};

typedef void (*WGPURequestAdapterCallback)(WGPUEnum status, WGPUAdapter adapter, WGPUStringView message,
                                           void* u1, void* u2);
typedef void (*WGPURequestDeviceCallback)(WGPUEnum status, WGPUDevice device, WGPUStringView message,
                                          void* u1, void* u2);
typedef void (*WGPUDeviceLostCallback)(const WGPUDevice* device, WGPUEnum reason, WGPUStringView message,
                                       void* u1, void* u2);
typedef void (*WGPUUncapturedErrorCallback)(const WGPUDevice* device, WGPUEnum type, WGPUStringView message,
                                            void* u1, void* u2);
typedef void (*WGPUBufferMapCallback)(WGPUEnum status, WGPUStringView message, void* u1, void* u2);
typedef void (*WGPUQueueWorkDoneCallback)(WGPUEnum status, WGPUStringView message, void* u1, void* u2);
typedef void (*WGPUPopErrorScopeCallback)(WGPUEnum status, WGPUEnum type, WGPUStringView message, void* u1,
                                          void* u2);
typedef void (*WGPUCreateComputePipelineAsyncCallback)(WGPUEnum status, WGPUComputePipeline pipeline,
                                                       WGPUStringView message, void* u1, void* u2);

// The eight callback-info structs with a mode share one shape (40 bytes).
#define ETW_CALLBACK_INFO(Name, Cb) \
  struct Name { WGPUChainedStruct* nextInChain; WGPUEnum mode; Cb callback; void* userdata1; void* userdata2; };
ETW_CALLBACK_INFO(WGPURequestAdapterCallbackInfo, WGPURequestAdapterCallback)
ETW_CALLBACK_INFO(WGPURequestDeviceCallbackInfo, WGPURequestDeviceCallback)
ETW_CALLBACK_INFO(WGPUDeviceLostCallbackInfo, WGPUDeviceLostCallback)
ETW_CALLBACK_INFO(WGPUBufferMapCallbackInfo, WGPUBufferMapCallback)
ETW_CALLBACK_INFO(WGPUQueueWorkDoneCallbackInfo, WGPUQueueWorkDoneCallback)
ETW_CALLBACK_INFO(WGPUPopErrorScopeCallbackInfo, WGPUPopErrorScopeCallback)
ETW_CALLBACK_INFO(WGPUCreateComputePipelineAsyncCallbackInfo, WGPUCreateComputePipelineAsyncCallback)
#undef ETW_CALLBACK_INFO
// The uncaptured-error callback info has NO mode field (32 bytes).
struct WGPUUncapturedErrorCallbackInfo {
  WGPUChainedStruct* nextInChain; WGPUUncapturedErrorCallback callback; void* userdata1; void* userdata2;
};

struct WGPULabelDescriptor { WGPUChainedStruct* nextInChain; WGPUStringView label; };
typedef WGPULabelDescriptor WGPUQueueDescriptor;
typedef WGPULabelDescriptor WGPUCommandEncoderDescriptor;
typedef WGPULabelDescriptor WGPUCommandBufferDescriptor;
typedef WGPULabelDescriptor WGPUShaderModuleDescriptor;

struct WGPUDeviceDescriptor {
  WGPUChainedStruct* nextInChain; WGPUStringView label; size_t requiredFeatureCount;
  const WGPUEnum* requiredFeatures; const WGPULimits* requiredLimits; WGPUQueueDescriptor defaultQueue;
  WGPUDeviceLostCallbackInfo deviceLostCallbackInfo; WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
};
struct WGPUDawnTogglesDescriptor {
  WGPUChainedStruct chain; size_t enabledToggleCount; const char* const* enabledToggles;
  size_t disabledToggleCount; const char* const* disabledToggles;
};
// Dawn's blob cache (chained on the device descriptor). load returns the stored size and copies
// only when valueSize is large enough; Dawn calls it twice (size, then bytes) and aborts when the
// answers differ.
typedef size_t (*WGPUDawnLoadCacheDataFunction)(const void* key, size_t keySize, void* value, size_t valueSize,
                                                void* userdata);
typedef void (*WGPUDawnStoreCacheDataFunction)(const void* key, size_t keySize, const void* value, size_t valueSize,
                                               void* userdata);
struct WGPUDawnCacheDeviceDescriptor {
  WGPUChainedStruct chain; WGPUStringView isolationKey; WGPUDawnLoadCacheDataFunction loadDataFunction;
  WGPUDawnStoreCacheDataFunction storeDataFunction; void* functionUserdata;
};
struct WGPUBufferDescriptor {
  WGPUChainedStruct* nextInChain; WGPUStringView label; WGPUBufferUsage usage; uint64_t size;
  WGPUBool mappedAtCreation;
};
struct WGPUShaderSourceWGSL { WGPUChainedStruct chain; WGPUStringView code; };
struct WGPUConstantEntry { WGPUChainedStruct* nextInChain; WGPUStringView key; double value; };
struct WGPUComputeState {
  WGPUChainedStruct* nextInChain; WGPUShaderModule module; WGPUStringView entryPoint; size_t constantCount;
  const WGPUConstantEntry* constants;
};
struct WGPUComputePipelineDescriptor {
  WGPUChainedStruct* nextInChain; WGPUStringView label; WGPUPipelineLayout layout; WGPUComputeState compute;
};
struct WGPUBindGroupEntry {
  WGPUChainedStruct* nextInChain; uint32_t binding; WGPUBuffer buffer; uint64_t offset; uint64_t size;
  WGPUSampler sampler; WGPUTextureView textureView;
};
struct WGPUBindGroupDescriptor {
  WGPUChainedStruct* nextInChain; WGPUStringView label; WGPUBindGroupLayout layout; size_t entryCount;
  const WGPUBindGroupEntry* entries;
};
struct WGPUPassTimestampWrites {
  WGPUChainedStruct* nextInChain; WGPUQuerySet querySet; uint32_t beginningOfPassWriteIndex;
  uint32_t endOfPassWriteIndex;
};
struct WGPUComputePassDescriptor {
  WGPUChainedStruct* nextInChain; WGPUStringView label; const WGPUPassTimestampWrites* timestampWrites;
};
struct WGPUQuerySetDescriptor { WGPUChainedStruct* nextInChain; WGPUStringView label; WGPUEnum type; uint32_t count; };

// --- layout pins (DAWN_ABI.md §2, §4)
static_assert(sizeof(WGPUStringView) == 16 && offsetof(WGPUStringView, length) == 8);
static_assert(sizeof(WGPUChainedStruct) == 16 && offsetof(WGPUChainedStruct, sType) == 8);
static_assert(sizeof(WGPUFuture) == 8);
static_assert(sizeof(WGPUFutureWaitInfo) == 16 && offsetof(WGPUFutureWaitInfo, completed) == 8);
static_assert(sizeof(WGPUInstanceCapabilities) == 24 && offsetof(WGPUInstanceCapabilities, timedWaitAnyMaxCount) == 16);
static_assert(sizeof(WGPUInstanceDescriptor) == 32 && offsetof(WGPUInstanceDescriptor, capabilities) == 8);
static_assert(sizeof(WGPURequestAdapterOptions) == 32 && offsetof(WGPURequestAdapterOptions, backendType) == 20 &&
              offsetof(WGPURequestAdapterOptions, compatibleSurface) == 24);
static_assert(sizeof(WGPUAdapterInfo) == 96 && offsetof(WGPUAdapterInfo, backendType) == 72 &&
              offsetof(WGPUAdapterInfo, vendorID) == 80 && offsetof(WGPUAdapterInfo, subgroupMinSize) == 88 &&
              offsetof(WGPUAdapterInfo, subgroupMaxSize) == 92);
static_assert(sizeof(WGPUSupportedFeatures) == 16);
static_assert(sizeof(WGPUMemoryHeapInfo) == 16 && sizeof(WGPUAdapterPropertiesMemoryHeaps) == 32 &&
              offsetof(WGPUAdapterPropertiesMemoryHeaps, heapCount) == 16 &&
              offsetof(WGPUAdapterPropertiesMemoryHeaps, heapInfo) == 24);
static_assert(sizeof(WGPULimits) == 152);
static_assert(offsetof(WGPULimits, maxBindGroups) == 24 && offsetof(WGPULimits, maxStorageBuffersPerShaderStage) == 52 &&
              offsetof(WGPULimits, maxUniformBufferBindingSize) == 64 &&
              offsetof(WGPULimits, maxStorageBufferBindingSize) == 72 &&
              offsetof(WGPULimits, minStorageBufferOffsetAlignment) == 84 && offsetof(WGPULimits, maxBufferSize) == 96 &&
              offsetof(WGPULimits, maxComputeWorkgroupStorageSize) == 124 &&
              offsetof(WGPULimits, maxComputeInvocationsPerWorkgroup) == 128 &&
              offsetof(WGPULimits, maxComputeWorkgroupSizeX) == 132 &&
              offsetof(WGPULimits, maxComputeWorkgroupsPerDimension) == 144 &&
              offsetof(WGPULimits, maxImmediateSize) == 148);
static_assert(sizeof(WGPURequestAdapterCallbackInfo) == 40 && offsetof(WGPURequestAdapterCallbackInfo, mode) == 8 &&
              offsetof(WGPURequestAdapterCallbackInfo, callback) == 16 &&
              offsetof(WGPURequestAdapterCallbackInfo, userdata2) == 32);
static_assert(sizeof(WGPUDeviceLostCallbackInfo) == 40 && sizeof(WGPUBufferMapCallbackInfo) == 40 &&
              sizeof(WGPUQueueWorkDoneCallbackInfo) == 40 && sizeof(WGPUPopErrorScopeCallbackInfo) == 40 &&
              sizeof(WGPURequestDeviceCallbackInfo) == 40 && sizeof(WGPUCreateComputePipelineAsyncCallbackInfo) == 40);
static_assert(sizeof(WGPUUncapturedErrorCallbackInfo) == 32 && offsetof(WGPUUncapturedErrorCallbackInfo, callback) == 8);
static_assert(sizeof(WGPULabelDescriptor) == 24 && offsetof(WGPULabelDescriptor, label) == 8);
static_assert(sizeof(WGPUDeviceDescriptor) == 144 && offsetof(WGPUDeviceDescriptor, requiredFeatureCount) == 24 &&
              offsetof(WGPUDeviceDescriptor, requiredLimits) == 40 && offsetof(WGPUDeviceDescriptor, defaultQueue) == 48 &&
              offsetof(WGPUDeviceDescriptor, deviceLostCallbackInfo) == 72 &&
              offsetof(WGPUDeviceDescriptor, uncapturedErrorCallbackInfo) == 112);
static_assert(sizeof(WGPUDawnTogglesDescriptor) == 48 && offsetof(WGPUDawnTogglesDescriptor, disabledToggles) == 40);
static_assert(sizeof(WGPUDawnCacheDeviceDescriptor) == 56 && offsetof(WGPUDawnCacheDeviceDescriptor, isolationKey) == 16 &&
              offsetof(WGPUDawnCacheDeviceDescriptor, loadDataFunction) == 32 &&
              offsetof(WGPUDawnCacheDeviceDescriptor, storeDataFunction) == 40 &&
              offsetof(WGPUDawnCacheDeviceDescriptor, functionUserdata) == 48);
static_assert(sizeof(WGPUBufferDescriptor) == 48 && offsetof(WGPUBufferDescriptor, usage) == 24 &&
              offsetof(WGPUBufferDescriptor, size) == 32 && offsetof(WGPUBufferDescriptor, mappedAtCreation) == 40);
static_assert(sizeof(WGPUShaderSourceWGSL) == 32 && offsetof(WGPUShaderSourceWGSL, code) == 16);
static_assert(sizeof(WGPUConstantEntry) == 32 && offsetof(WGPUConstantEntry, value) == 24);
static_assert(sizeof(WGPUComputeState) == 48 && offsetof(WGPUComputeState, entryPoint) == 16 &&
              offsetof(WGPUComputeState, constants) == 40);
static_assert(sizeof(WGPUComputePipelineDescriptor) == 80 && offsetof(WGPUComputePipelineDescriptor, layout) == 24 &&
              offsetof(WGPUComputePipelineDescriptor, compute) == 32);
static_assert(sizeof(WGPUBindGroupEntry) == 56 && offsetof(WGPUBindGroupEntry, buffer) == 16 &&
              offsetof(WGPUBindGroupEntry, size) == 32 && offsetof(WGPUBindGroupEntry, textureView) == 48);
static_assert(sizeof(WGPUBindGroupDescriptor) == 48 && offsetof(WGPUBindGroupDescriptor, layout) == 24 &&
              offsetof(WGPUBindGroupDescriptor, entries) == 40);
static_assert(sizeof(WGPUPassTimestampWrites) == 24 && offsetof(WGPUPassTimestampWrites, beginningOfPassWriteIndex) == 16);
static_assert(sizeof(WGPUComputePassDescriptor) == 32 && offsetof(WGPUComputePassDescriptor, timestampWrites) == 24);
static_assert(sizeof(WGPUQuerySetDescriptor) == 32 && offsetof(WGPUQuerySetDescriptor, type) == 24 &&
              offsetof(WGPUQuerySetDescriptor, count) == 28);

// --- functions (DAWN_ABI.md §5)
WGPUInstance wgpuCreateInstance(const WGPUInstanceDescriptor* descriptor);
WGPUFuture wgpuInstanceRequestAdapter(WGPUInstance, const WGPURequestAdapterOptions*, WGPURequestAdapterCallbackInfo);
WGPUEnum wgpuInstanceWaitAny(WGPUInstance, size_t futureCount, WGPUFutureWaitInfo* futures, uint64_t timeoutNS);
void wgpuInstanceRelease(WGPUInstance);
WGPUEnum wgpuAdapterGetInfo(WGPUAdapter, WGPUAdapterInfo* info);
WGPUEnum wgpuAdapterGetLimits(WGPUAdapter, WGPULimits* limits);
WGPUBool wgpuAdapterHasFeature(WGPUAdapter, WGPUEnum feature);
WGPUFuture wgpuAdapterRequestDevice(WGPUAdapter, const WGPUDeviceDescriptor*, WGPURequestDeviceCallbackInfo);
void wgpuAdapterRelease(WGPUAdapter);
void wgpuAdapterInfoFreeMembers(WGPUAdapterInfo adapterInfo);
void wgpuAdapterPropertiesMemoryHeapsFreeMembers(WGPUAdapterPropertiesMemoryHeaps memoryHeaps);
WGPUBuffer wgpuDeviceCreateBuffer(WGPUDevice, const WGPUBufferDescriptor*);
WGPUShaderModule wgpuDeviceCreateShaderModule(WGPUDevice, const WGPUShaderModuleDescriptor*);
WGPUFuture wgpuDeviceCreateComputePipelineAsync(WGPUDevice, const WGPUComputePipelineDescriptor*,
                                                WGPUCreateComputePipelineAsyncCallbackInfo);
WGPUBindGroup wgpuDeviceCreateBindGroup(WGPUDevice, const WGPUBindGroupDescriptor*);
WGPUCommandEncoder wgpuDeviceCreateCommandEncoder(WGPUDevice, const WGPUCommandEncoderDescriptor*);
WGPUQuerySet wgpuDeviceCreateQuerySet(WGPUDevice, const WGPUQuerySetDescriptor*);
WGPUQueue wgpuDeviceGetQueue(WGPUDevice);
WGPUEnum wgpuDeviceGetLimits(WGPUDevice, WGPULimits*);
WGPUBool wgpuDeviceHasFeature(WGPUDevice, WGPUEnum feature);
WGPUBool wgpuInstanceHasWGSLLanguageFeature(WGPUInstance, WGPUEnum feature);
void wgpuDevicePushErrorScope(WGPUDevice, WGPUEnum filter);
WGPUFuture wgpuDevicePopErrorScope(WGPUDevice, WGPUPopErrorScopeCallbackInfo);
void wgpuDeviceDestroy(WGPUDevice);
void wgpuDeviceRelease(WGPUDevice);
void wgpuQueueSubmit(WGPUQueue, size_t commandCount, const WGPUCommandBuffer* commands);
void wgpuQueueWriteBuffer(WGPUQueue, WGPUBuffer, uint64_t bufferOffset, const void* data, size_t size);
WGPUFuture wgpuQueueOnSubmittedWorkDone(WGPUQueue, WGPUQueueWorkDoneCallbackInfo);
void wgpuQueueRelease(WGPUQueue);
WGPUFuture wgpuBufferMapAsync(WGPUBuffer, WGPUMapMode mode, size_t offset, size_t size, WGPUBufferMapCallbackInfo);
const void* wgpuBufferGetConstMappedRange(WGPUBuffer, size_t offset, size_t size);
void* wgpuBufferGetMappedRange(WGPUBuffer, size_t offset, size_t size);
void wgpuBufferUnmap(WGPUBuffer);
void wgpuBufferDestroy(WGPUBuffer);
void wgpuBufferRelease(WGPUBuffer);
WGPUComputePassEncoder wgpuCommandEncoderBeginComputePass(WGPUCommandEncoder, const WGPUComputePassDescriptor*);
void wgpuCommandEncoderCopyBufferToBuffer(WGPUCommandEncoder, WGPUBuffer src, uint64_t srcOff, WGPUBuffer dst,
                                          uint64_t dstOff, uint64_t size);
void wgpuCommandEncoderClearBuffer(WGPUCommandEncoder, WGPUBuffer, uint64_t offset, uint64_t size);
void wgpuCommandEncoderResolveQuerySet(WGPUCommandEncoder, WGPUQuerySet, uint32_t firstQuery, uint32_t queryCount,
                                       WGPUBuffer destination, uint64_t destinationOffset);
WGPUCommandBuffer wgpuCommandEncoderFinish(WGPUCommandEncoder, const WGPUCommandBufferDescriptor*);
void wgpuCommandEncoderRelease(WGPUCommandEncoder);
void wgpuComputePassEncoderSetPipeline(WGPUComputePassEncoder, WGPUComputePipeline);
void wgpuComputePassEncoderSetBindGroup(WGPUComputePassEncoder, uint32_t groupIndex, WGPUBindGroup group,
                                        size_t dynamicOffsetCount, const uint32_t* dynamicOffsets);
void wgpuComputePassEncoderDispatchWorkgroups(WGPUComputePassEncoder, uint32_t x, uint32_t y, uint32_t z);
void wgpuComputePassEncoderEnd(WGPUComputePassEncoder);
void wgpuComputePassEncoderRelease(WGPUComputePassEncoder);
WGPUBindGroupLayout wgpuComputePipelineGetBindGroupLayout(WGPUComputePipeline, uint32_t groupIndex);
void wgpuComputePipelineRelease(WGPUComputePipeline);
void wgpuShaderModuleRelease(WGPUShaderModule);
void wgpuBindGroupLayoutRelease(WGPUBindGroupLayout);
void wgpuBindGroupRelease(WGPUBindGroup);
void wgpuCommandBufferRelease(WGPUCommandBuffer);
void wgpuQuerySetDestroy(WGPUQuerySet);
void wgpuQuerySetRelease(WGPUQuerySet);

}  // extern "C"
