using System;
using System.Threading;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

// Receives, on the loop thread: one multishot IORING_OP_RECV, armed at the first receive, stays armed across requests; the
// kernel fills a buffer of the loop's buffer ring whenever bytes arrive, and the connection copies them to its reader.
internal sealed unsafe partial class IoUringConnection : IIoUringBufferWaiter
{
    /// <summary>Blocks a connection holds for a reader that is not reading before its receive is paused (64 KiB).</summary>
    private const int MaxHeldBuffers = 16;

    private HeldBuffer[] _held = new HeldBuffer[4];
    private int _heldHead;
    private int _heldCount;
    private bool _multishotArmed;
    private bool _waitingForBuffers;
    private Exception? _receiveError;

    /// <summary>The bytes a multishot receive has already brought, copied into <paramref name="buffer"/> at once; 0 when none is held.</summary>
    private int TakeHeld(Memory<byte> buffer)
    {
        if (_heldCount == 0)
        {
            return 0;
        }

        IoUringReceiveBuffers buffers = _loop.ReceiveBuffers;
        Span<byte> target = buffer.Span;
        int copied = 0;
        while (_heldCount > 0 && copied < target.Length)
        {
            ref HeldBuffer held = ref _held[_heldHead];
            int count = Math.Min(held.End - held.Start, target.Length - copied);
            buffers.Data(held.Id, held.Start, held.Start + count).CopyTo(target.Slice(copied));
            copied += count;
            held.Start += count;
            if (held.Start == held.End)
            {
                buffers.Provide(held.Id);
                _heldHead = (_heldHead + 1) & (_held.Length - 1);
                _heldCount--;
            }
        }

        return copied;
    }

    /// <summary>A receive is pending: completes it from what is held, or arms the multishot receive.</summary>
    private protected override void StartReceiveOnLoop()
    {
        if (!_receivePending)
        {
            return;
        }

        if (_heldCount > 0)
        {
            int copied = TakeHeld(_receiveBuffer);
            ArmMultishot();
            CompleteReceive(copied);
            return;
        }

        if (_receiveError is { } error)
        {
            _receiveError = null;
            CompleteReceive(0, error);
            return;
        }

        if (_closing || IsReceiveStopped || _endOfStream)
        {
            CompleteReceive(0);
            return;
        }

        ArmMultishot();
    }

    private void ArmMultishot()
    {
        if (_multishotArmed || _waitingForBuffers || _closing || _endOfStream || _receiveError is not null
            || _heldCount >= MaxHeldBuffers || IsReceiveStopped)
        {
            return;
        }

        Sqe* sqe = _loop.Submit(this, OpReceive);
        sqe->Opcode = OpcodeRecv;
        sqe->Fd = _fd;
        sqe->IoPriority = RecvMultishot;
        sqe->Flags = SqeBufferSelect;
        sqe->BufferGroup = IoUringReceiveBuffers.GroupId;
        _multishotArmed = true;
        _operationsInFlight++;
    }

    private void OnReceiveCompleted(int result, uint flags)
    {
        if ((flags & CqeMore) == 0)
        {
            _multishotArmed = false;
            _receiveCancelled = false;
            _operationsInFlight--;
        }

        if (result > 0)
        {
            int id = (int)(flags >> CqeBufferShift);
            if (_closing || IsReceiveStopped)
            {
                _loop.ReceiveBuffers.Provide(id);
            }
            else
            {
                Hold(id, result);
                if (_heldCount >= MaxHeldBuffers && _multishotArmed)
                {
                    // The reader is not keeping up: pause until it has taken what is here.
                    CancelReceive();
                }
            }
        }
        else if (result == 0)
        {
            _endOfStream = true;
        }
        else if (result == -ENOBUFS)
        {
            _waitingForBuffers = true;
            _loop.ReceiveBuffers.OnExhausted(this);
        }
        else if (result != -ECANCELED && !_closing)
        {
            _receiveError = result == -ECONNRESET
                ? new ConnectionResetException("The peer reset the connection.", new IoUringException("recv", ECONNRESET))
                : new IoUringException("recv", -result);
        }

        if (_receivePending)
        {
            StartReceiveOnLoop();
        }
    }

    private protected override void StopReceivingOnLoop()
    {
        ReleaseHeld();
        if (_multishotArmed)
        {
            CancelReceive();
        }

        if (_receivePending)
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

    void IIoUringBufferWaiter.OnBuffersAvailable()
    {
        _waitingForBuffers = false;
        if (_receivePending)
        {
            StartReceiveOnLoop();
        }
    }

    private void Hold(int id, int length)
    {
        if (_heldCount == _held.Length)
        {
            // Completions that were on their way when the receive was paused: keep them in order.
            var larger = new HeldBuffer[_held.Length * 2];
            for (int i = 0; i < _heldCount; i++)
            {
                larger[i] = _held[(_heldHead + i) & (_held.Length - 1)];
            }

            _held = larger;
            _heldHead = 0;
        }

        _held[(_heldHead + _heldCount) & (_held.Length - 1)] = new HeldBuffer { Id = id, Start = 0, End = length };
        _heldCount++;
    }

    /// <summary>Gives every held block back to the ring (the connection stopped receiving or closes).</summary>
    private void ReleaseHeld()
    {
        IoUringReceiveBuffers buffers = _loop.ReceiveBuffers;
        while (_heldCount > 0)
        {
            buffers.Provide(_held[_heldHead].Id);
            _heldHead = (_heldHead + 1) & (_held.Length - 1);
            _heldCount--;
        }

        if (_waitingForBuffers)
        {
            _waitingForBuffers = false;
            buffers.RemoveWaiter(this);
        }
    }

    /// <summary>Bytes of one buffer-ring block that arrived and were not read yet.</summary>
    private struct HeldBuffer
    {
        public int Id;
        public int Start;
        public int End;
    }
}
