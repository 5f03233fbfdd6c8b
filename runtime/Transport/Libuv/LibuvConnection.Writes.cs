using System;
using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Falconet.Transport.Libuv;

// Writes, on the loop thread: uv_try_write first, uv_write for what the kernel did not take at once.
internal sealed unsafe partial class LibuvConnection
{
    private protected override void SendOnLoop()
    {
        if (!_sendPending)
        {
            return;
        }

        ReadOnlySequence<byte> buffers = _sendBuffers;
        _sendBuffers = default;
        if (_handleClosed)
        {
            _writeRestAtOnce = false;
            CompleteSend(new ConnectionAbortedException("The connection was aborted or disposed."));
            return;
        }

        if (_writeRestAtOnce)
        {
            // What uv_try_write did not take a moment ago (TrySendAtOnce): straight to uv_write.
            _writeRestAtOnce = false;
            StartWriteOnLoop(buffers);
            return;
        }

        int written = TryWriteOnLoop(buffers, out Exception? error);
        if (error is not null)
        {
            CompleteSend(error);
        }
        else if (written == buffers.Length)
        {
            CompleteSend(null);
        }
        else
        {
            StartWriteOnLoop(buffers.Slice(written));
        }
    }

    /// <summary>Writes what the kernel takes now, without waiting; returns the bytes written.</summary>
    private int TryWriteOnLoop(in ReadOnlySequence<byte> buffers, out Exception? error)
    {
        error = null;
        int count = CountSegments(buffers);
        LibuvNative.Buffer* stack = stackalloc LibuvNative.Buffer[StackBuffers];
        LibuvNative.Buffer* array = count <= StackBuffers ? stack : RentBuffers(count);
        Fill(buffers, array);
        int written = LibuvNative.TryWrite(_handle, array, (uint)count);
        if (written >= 0)
        {
            return written;
        }

        if (written == LibuvNative.EAGAIN)
        {
            return 0;
        }

        error = written is LibuvNative.ECONNRESET or LibuvNative.EPIPE
            ? new ConnectionResetException("The peer reset the connection.", new LibuvException("uv_try_write", written))
            : new LibuvException("uv_try_write", written);
        return 0;
    }

    /// <summary>Queues the rest of a send with <c>uv_write</c>; its callback completes the send.</summary>
    private void StartWriteOnLoop(in ReadOnlySequence<byte> rest)
    {
        int count = CountSegments(rest);
        LibuvNative.Buffer* stack = stackalloc LibuvNative.Buffer[StackBuffers];
        LibuvNative.Buffer* array = count <= StackBuffers ? stack : RentBuffers(count);
        Fill(rest, array);

        // libuv copies the buffer descriptors into the request; the bytes themselves stay in the blocks until the callback.
        int result = LibuvNative.Write(_writeRequest, _handle, array, (uint)count, &OnWrite);
        if (result < 0)
        {
            CompleteSend(new LibuvException("uv_write", result));
        }
    }

    private static int CountSegments(in ReadOnlySequence<byte> buffers)
    {
        if (buffers.IsSingleSegment)
        {
            return 1;
        }

        int count = 0;
        foreach (ReadOnlyMemory<byte> segment in buffers)
        {
            if (!segment.IsEmpty)
            {
                count++;
            }
        }

        return count;
    }

    private static void Fill(in ReadOnlySequence<byte> buffers, LibuvNative.Buffer* array)
    {
        int i = 0;
        foreach (ReadOnlyMemory<byte> segment in buffers)
        {
            if (!segment.IsEmpty)
            {
                // Pool blocks live in pinned slabs; other memory a caller sends must be pinned by the caller.
                array[i++] = new LibuvNative.Buffer((byte*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(segment.Span)), segment.Length);
            }
        }
    }

    private LibuvNative.Buffer* RentBuffers(int count)
    {
        if (count > _bufferCapacity)
        {
            _buffers = (LibuvNative.Buffer*)NativeMemory.Realloc(_buffers, (nuint)(count * sizeof(LibuvNative.Buffer)));
            _bufferCapacity = count;
        }

        return _buffers;
    }

    [UnmanagedCallersOnly]
    private static void OnWrite(void* request, int status)
    {
        var connection = (LibuvConnection)GCHandle.FromIntPtr(LibuvNative.GetData(request)).Target!;
        try
        {
            connection.CompleteSend(status switch
            {
                0 => null,
                LibuvNative.ECANCELED => new ConnectionAbortedException("The connection was aborted or disposed."),
                LibuvNative.ECONNRESET or LibuvNative.EPIPE => new ConnectionResetException("The peer reset the connection.", new LibuvException("write", status)),
                _ => new LibuvException("write", status),
            });
            if (connection._shutdownPending)
            {
                connection.ShutdownSendOnLoop();
            }
        }
        catch (Exception exception)
        {
            LibuvLog.CallbackFailed(connection._loop.Logger, connection._loop.Index, exception);
        }
    }
}
