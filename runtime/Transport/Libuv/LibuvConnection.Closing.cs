using System;
using System.Runtime.InteropServices;
using System.Threading;

namespace Falconet.Transport.Libuv;

// Closing, on the loop thread: the FIN after queued bytes, the close or reset of the handle, and the handle's memory freed.
internal sealed unsafe partial class LibuvConnection
{
    private protected override void ShutdownSendOnLoop()
    {
        if (_handleClosed || _sendShutDown)
        {
            return;
        }

        if (_sendPending)
        {
            // After the bytes already queued: the write callback comes back here.
            _shutdownPending = true;
            return;
        }

        _shutdownPending = false;
        _sendShutDown = true;
        nint fd;
        if (LibuvNative.FileNo(_handle, &fd) == 0)
        {
            // Synchronous shutdown(SHUT_WR): the FIN follows the bytes the kernel already has (uv_shutdown would wait a loop turn).
            LibuvNative.Shutdown((int)fd, LibuvNative.ShutWrite);
        }
    }

    /// <summary>Closes the handle on the loop thread: a pending receive returns 0, a pending write fails; with <paramref name="reset"/> the peer gets an RST.</summary>
    internal override void CloseOnLoop(bool reset)
    {
        if (_handleClosed)
        {
            return;
        }

        if (!reset)
        {
            // Graceful: FIN after the bytes already sent (or after the pending write, which the close cancels).
            ShutdownSendOnLoop();
        }

        _handleClosed = true;
        MarkClosedLocally(reset);
        _reading = false;
        if (_receivePending)
        {
            CompleteReceive(0);
        }

        if (reset && !_isPipe && LibuvNative.TcpCloseReset(_handle, &OnClosed) == 0)
        {
            return;
        }

        LibuvNative.Close(_handle, &OnClosed);
    }

    [UnmanagedCallersOnly]
    private static void OnClosed(void* handle)
    {
        GCHandle self = GCHandle.FromIntPtr(LibuvNative.GetData(handle));
        var connection = (LibuvConnection)self.Target!;
        try
        {
            // A pending write was cancelled before this callback; it completed its send already.
            connection.CompleteSend(new ConnectionAbortedException("The connection was aborted or disposed."));
            NativeMemory.Free(connection._writeRequest);
            NativeMemory.Free(connection._buffers);
            NativeMemory.Free(handle);
            connection._writeRequest = null;
            connection._buffers = null;
            connection._handle = null;
            self.Free();
            Interlocked.Decrement(ref connection._loop.OpenConnections);
            connection.ReleaseHandle();
        }
        catch (Exception exception)
        {
            LibuvLog.CallbackFailed(connection._loop.Logger, connection._loop.Index, exception);
        }
    }

    /// <summary>Frees a client handle that never became a connection.</summary>
    [UnmanagedCallersOnly]
    internal static void OnOrphanClosed(void* handle) => NativeMemory.Free(handle);
}
