using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Falconet.Transport.Libuv;

// Reads, on the loop thread: reading runs only while a receive is pending, into that receive's memory.
internal sealed unsafe partial class LibuvConnection
{
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
        if (!connection._receivePending)
        {
            // No receive to read into: libuv reports ENOBUFS and the read callback stops reading.
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

        if (read == LibuvNative.ENOBUFS && !_receivePending)
        {
            StopReadingOnLoop();
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
