using System;
using System.Runtime.InteropServices;
using Microsoft.Extensions.Logging;

namespace Falconet.Transport.Libuv;

/// <summary>
/// One libuv event loop on its own thread, with the memory pool that thread owns. Every libuv call for the loop's
/// handles is made on this thread; other threads hand work to it through a queue and <c>uv_async_send</c>.
/// </summary>
internal sealed unsafe class LibuvLoop : TransportLoop
{
    private readonly object _asyncGate = new();
    private GCHandle _self;
    private void* _loop;
    private void* _async;
    private bool _asyncClosed;
    private bool _stopping;

    public LibuvLoop(int index, bool trackLeaks, ILogger logger)
        : base(index, $"falconet-uv-{index}", $"libuv-{index}", trackLeaks, logger)
    {
        _loop = NativeMemory.AllocZeroed(LibuvNative.LoopSize());
        _async = NativeMemory.AllocZeroed(LibuvNative.HandleSize(LibuvNative.HandleTypeAsync));
        try
        {
            LibuvNative.Check(LibuvNative.LoopInit(_loop), "uv_loop_init");
        }
        catch
        {
            NativeMemory.Free(_loop);
            NativeMemory.Free(_async);
            Pool.Dispose();
            throw;
        }

        _self = GCHandle.Alloc(this);
        LibuvNative.SetData(_async, GCHandle.ToIntPtr(_self));

        // Before the loop runs, this thread may touch it; afterwards only the loop thread does.
        LibuvNative.Check(LibuvNative.AsyncInit(_loop, _async, &OnAsync), "uv_async_init");
        StartThread();
    }

    /// <summary>The native <c>uv_loop_t</c>.</summary>
    public void* Handle => _loop;

    protected override void Wake()
    {
        // The handle is closed and freed by the loop thread at stop, under the same lock.
        lock (_asyncGate)
        {
            if (!_asyncClosed)
            {
                LibuvNative.AsyncSend(_async);
                return;
            }
        }

        DrainToThreadPool();
    }

    protected override void RunLoop()
    {
        int result = LibuvNative.Run(_loop, LibuvNative.RunDefault);
        if (result < 0)
        {
            LibuvLog.LoopFailed(Logger, Index, new LibuvException("uv_run", result));
        }

        // Every handle is closed: the loop has nothing left and can be freed.
        int closed = LibuvNative.LoopClose(_loop);
        if (closed < 0)
        {
            LibuvLog.LoopFailed(Logger, Index, new LibuvException("uv_loop_close", closed));
        }
        else
        {
            NativeMemory.Free(_loop);
            _loop = null;
        }
    }

    protected override void OnWorkItemFailed(Exception exception) => LibuvLog.WorkItemFailed(Logger, Index, exception);

    protected override void BeginStopOnLoop()
    {
        if (_stopping)
        {
            return;
        }

        _stopping = true;
        LibuvNative.Walk(_loop, &OnWalkClose, null);
    }

    private static LibuvLoop FromHandle(void* handle) => (LibuvLoop)GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target!;

    [UnmanagedCallersOnly]
    private static void OnAsync(void* handle)
    {
        FromHandle(handle).RunQueued();
    }

    [UnmanagedCallersOnly]
    private static void OnWalkClose(void* handle, void* argument)
    {
        try
        {
            if (LibuvNative.IsClosing(handle) != 0)
            {
                return;
            }

            object? owner = GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target;
            switch (owner)
            {
                case LibuvConnection connection:
                    connection.CloseOnLoop(reset: true);
                    break;
                case LibuvListenSocket listener:
                    listener.CloseOnLoop();
                    break;
                case LibuvLoop loop:
                    loop.CloseAsyncHandle();
                    break;
            }
        }
        catch (Exception exception)
        {
            Environment.FailFast("A libuv handle could not be closed at stop.", exception);
        }
    }

    private void CloseAsyncHandle()
    {
        lock (_asyncGate)
        {
            _asyncClosed = true;
        }

        // Work queued before the flag was set still runs: nothing else will wake the loop for it.
        RunQueued();
        LibuvNative.Close(_async, &OnAsyncClosed);
    }

    [UnmanagedCallersOnly]
    private static void OnAsyncClosed(void* handle)
    {
        LibuvLoop loop = FromHandle(handle);
        loop._self.Free();
        NativeMemory.Free(handle);
        loop._async = null;
    }
}

/// <summary>Log messages of the libuv transport.</summary>
internal static partial class LibuvLog
{
    [LoggerMessage(EventId = 300, Level = LogLevel.Error, Message = "libuv loop {Loop} failed.")]
    public static partial void LoopFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 301, Level = LogLevel.Error, Message = "A work item on libuv loop {Loop} threw.")]
    public static partial void WorkItemFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 302, Level = LogLevel.Warning, Message = "Accepting a connection on libuv loop {Loop} failed: {ErrorName} ({ErrorText}).")]
    public static partial void AcceptFailed(ILogger logger, int loop, string errorName, string errorText);

    [LoggerMessage(EventId = 303, Level = LogLevel.Error, Message = "A libuv callback on loop {Loop} threw.")]
    public static partial void CallbackFailed(ILogger logger, int loop, Exception exception);

    [LoggerMessage(EventId = 304, Level = LogLevel.Debug, Message = "libuv {Version} loaded; {Loops} loops, connections spread by {Distribution}.")]
    public static partial void Started(ILogger logger, string version, int loops, LibuvDistribution distribution);
}
