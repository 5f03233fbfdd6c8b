using System;
using System.Buffers;
using System.Runtime.InteropServices;
using System.Threading;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

// Receives, on the loop thread: one IORING_OP_RECV per receive, into the caller's memory.
internal sealed unsafe partial class IoUringConnection
{
    private ArrayPin _receivePin;
    private bool _receivedBefore;
    private static readonly bool s_pollFirst = Environment.GetEnvironmentVariable("FALCONET_URING_POLLFIRST") == "1";

    private protected override void StartReceiveOnLoop()
    {
        if (!_receivePending || _receiveInFlight)
        {
            return;
        }

        if (IsMultishot)
        {
            ContinueMultishotReceive();
            return;
        }

        if (_closing || IsReceiveStopped || _endOfStream)
        {
            CompleteReceive(0);
            return;
        }

        // The kernel writes into the memory whenever the bytes arrive: it stays pinned until the completion.
        byte* pointer = _receivePin.Pin(_receiveBuffer);
        Sqe* sqe = _loop.Submit(this, OpReceive);
        sqe->Opcode = OpcodeRecv;
        sqe->Fd = _fd;
        sqe->Address = (ulong)pointer;
        sqe->Length = (uint)_receiveBuffer.Length;
        if (s_pollFirst && _receivedBefore)
        {
            sqe->IoPriority = RecvSendPollFirst;
        }

        _receiveInFlight = true;
        _operationsInFlight++;
    }

    private protected override void StopReceivingOnLoop()
    {
        ReleaseHeld();
        if (_receiveInFlight || _multishotArmed)
        {
            CancelReceive();
        }

        if (_receivePending && !_receiveInFlight)
        {
            CompleteReceive(0);
        }
    }

    private void CancelReceive()
    {
        if (!_receiveCancelled)
        {
            _receiveCancelled = true;
            SubmitCancel(OpReceive);
        }
    }

    private void OnReceiveCompleted(int result)
    {
        _receiveInFlight = false;
        _receiveCancelled = false;
        _operationsInFlight--;
        if (!_receivePending)
        {
            return;
        }

        if (result > 0)
        {
            _receivedBefore = true;

            // With inline scheduling the connection's code runs here and normally asks for the next receive.
            CompleteReceive(result);
        }
        else if (result == 0)
        {
            _endOfStream = true;
            CompleteReceive(0);
        }
        else if (result == -ECANCELED || _closing)
        {
            CompleteReceive(0);
        }
        else if (result == -ECONNRESET)
        {
            CompleteReceive(0, new ConnectionResetException("The peer reset the connection.", new IoUringException("recv", ECONNRESET)));
        }
        else
        {
            CompleteReceive(0, new IoUringException("recv", -result));
        }
    }

    /// <summary>
    /// Keeps the array a receive goes into pinned, from one receive to the next into the same array (a pool slab: the
    /// receives of a connection go into the blocks of a few slabs), so the common receive pins nothing new.
    /// </summary>
    private struct ArrayPin
    {
        private object? _array;
        private GCHandle _handle;
        private MemoryHandle _other;

        public byte* Pin(Memory<byte> memory)
        {
            _other.Dispose();
            _other = default;
            if (MemoryMarshal.TryGetArray((ReadOnlyMemory<byte>)memory, out ArraySegment<byte> segment) && segment.Array is { } array)
            {
                if (!ReferenceEquals(array, _array))
                {
                    Release();
                    _handle = GCHandle.Alloc(array, GCHandleType.Pinned);
                    _array = array;
                }

                return (byte*)_handle.AddrOfPinnedObject() + segment.Offset;
            }

            _other = memory.Pin();
            return (byte*)_other.Pointer;
        }

        public void Release()
        {
            if (_handle.IsAllocated)
            {
                _handle.Free();
            }

            _array = null;
            _other.Dispose();
            _other = default;
        }
    }
}
