using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Falconet.Transport.Libuv;

// Reads, on the loop thread: reading runs only while a receive is pending, into that receive's memory. A wait for data
// (a receive of no memory, WaitForDataAsync) completes when libuv finds the socket readable and asks for memory; the
// receive that follows it reads with one recv of its own, on the same loop turn.
internal sealed unsafe partial class LibuvConnection
{
    // The last wait for data completed because the socket was readable, and no receive has read since.
    private bool _readable;

    internal override bool CanWaitForData => true;

    private protected override bool TryReceiveAtOnce(Memory<byte> buffer, out int received)
    {
        received = 0;
        if (!_readable || buffer.IsEmpty || _handleClosed)
        {
            return false;
        }

        _readable = false;
        nint fd;
        if (LibuvNative.FileNo(_handle, &fd) < 0)
        {
            return false;
        }

        nint read;
        fixed (byte* start = buffer.Span)
        {
            read = LibuvNative.Receive((int)fd, start, (nuint)buffer.Length, LibuvNative.MsgDontWait);
        }

        if (read > 0)
        {
            received = (int)read;
            return true;
        }

        if (read == 0)
        {
            // The peer's end: what libuv's read would have reported as EOF.
            _endOfStream = true;
            StopReadingOnLoop();
            return true;
        }

        // Nothing after all (EAGAIN), or an error: libuv's own read reports it when the receive waits.
        return false;
    }

    private protected override void StartReceiveOnLoop()
    {
        if (!_receivePending)
        {
            return;
        }

        if (_handleClosed || IsReceiveStopped || _endOfStream)
        {
            CompleteReceive(0);
            return;
        }

        if (!_reading)
        {
            int result = LibuvNative.ReadStart(_handle, &OnAlloc, &OnRead);
            if (result < 0)
            {
                CompleteReceive(0, new LibuvException("uv_read_start", result));
                return;
            }

            _reading = true;
        }
    }

    private void StopReadingOnLoop()
    {
        if (_reading && !_handleClosed)
        {
            LibuvNative.ReadStop(_handle);
        }

        _reading = false;
    }

    private protected override void StopReceivingOnLoop()
    {
        StopReadingOnLoop();
        if (_receivePending)
        {
            CompleteReceive(0);
        }
    }

    [UnmanagedCallersOnly]
    private static void OnAlloc(void* handle, nuint suggestedSize, LibuvNative.Buffer* buffer)
    {
        var connection = (LibuvConnection)GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target!;
        if (!connection._receivePending || connection._receiveBuffer.IsEmpty)
        {
            // No receive to read into, or a wait for data, which the socket's readiness completes: libuv reports ENOBUFS.
            *buffer = default;
            return;
        }

        // Pool blocks live in pinned slabs, so the address stays valid until the receive completes.
        Memory<byte> memory = connection._receiveBuffer;
        *buffer = new LibuvNative.Buffer((byte*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(memory.Span)), memory.Length);
    }

    [UnmanagedCallersOnly]
    private static void OnRead(void* handle, nint read, LibuvNative.Buffer* buffer)
    {
        var connection = (LibuvConnection)GCHandle.FromIntPtr(LibuvNative.GetData(handle)).Target!;
        try
        {
            connection.OnReadOnLoop((int)read);
        }
        catch (Exception exception)
        {
            LibuvLog.CallbackFailed(connection._loop.Logger, connection._loop.Index, exception);
        }
    }

    private void OnReadOnLoop(int read)
    {
        if (read == 0)
        {
            // EAGAIN: nothing was read into the buffer; the receive stays pending.
            return;
        }

        if (read == LibuvNative.ENOBUFS)
        {
            if (_receivePending && _receiveBuffer.IsEmpty)
            {
                // A wait for data: the socket is readable. With inline scheduling the receive that follows runs here.
                _readable = true;
                CompleteReceive(0);
            }

            if (!_receivePending && !_handleClosed)
            {
                StopReadingOnLoop();
            }

            return;
        }

        if (read > 0)
        {
            // With inline scheduling the connection's code runs here and normally asks for the next receive.
            CompleteReceive(read);
        }
        else if (read == LibuvNative.EOF)
        {
            _endOfStream = true;
            StopReadingOnLoop();
            CompleteReceive(0);
            return;
        }
        else
        {
            StopReadingOnLoop();
            CompleteReceive(0, read == LibuvNative.ECONNRESET
                ? new ConnectionResetException("The peer reset the connection.", new LibuvException("read", read))
                : new LibuvException("read", read));
            return;
        }

        if (!_receivePending && !_handleClosed)
        {
            StopReadingOnLoop();
        }
    }
}
