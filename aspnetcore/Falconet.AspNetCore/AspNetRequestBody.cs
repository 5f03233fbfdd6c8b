using System;
using System.Buffers;
using System.IO;
using System.IO.Pipelines;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http;
using AspNetBadHttpRequestException = Microsoft.AspNetCore.Http.BadHttpRequestException;
using FalconetBadHttpRequestException = Falconet.Http.BadHttpRequestException;

namespace Falconet.AspNetCore;

/// <summary>
/// The request body as ASP.NET Core's <see cref="Stream"/> over Falconet's body reader: applies a lower body limit the
/// application set (IHttpMaxRequestBodySizeFeature), reports malformed or oversized bodies as ASP.NET Core's
/// <see cref="AspNetBadHttpRequestException"/> (so the framework answers 400 or 413), and reads synchronously only when
/// AllowSynchronousIO is set. One per connection, reset per request; disposing it does nothing.
/// </summary>
internal sealed class AspNetRequestBodyStream : Stream
{
    private readonly IConnectionFeatures _features;
    private long _read;

    public AspNetRequestBodyStream(IConnectionFeatures features)
    {
        _features = features;
    }

    /// <summary>True once the application asked for body bytes in this request.</summary>
    public bool HasStartedReading { get; private set; }

    /// <summary>True once a read found the body malformed, cut short or too slow (Falconet answers the request itself then).</summary>
    public bool Faulted => Error is not null;

    /// <summary>The error a read of this request's body found (IBadRequestExceptionFeature), or null.</summary>
    public AspNetBadHttpRequestException? Error { get; private set; }

    private RequestBodyReader Reader => _features.Context.Request.BodyReader;

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public void Reset()
    {
        HasStartedReading = false;
        Error = null;
        _read = 0;
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (!HasStartedReading)
        {
            StartReading();
        }

        ValueTask<int> read;
        try
        {
            read = Reader.ReadAsync(buffer, cancellationToken);
        }
        catch (FalconetBadHttpRequestException exception)
        {
            throw Translate(exception);
        }

        if (read.IsCompletedSuccessfully)
        {
            return new ValueTask<int>(Count(read.Result));
        }

        return AwaitReadAsync(read);
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    public override int Read(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        return Read(buffer.AsSpan(offset, count));
    }

    public override int Read(Span<byte> buffer)
    {
        if (!_features.Context.Response.AllowSynchronousWrites)
        {
            throw new InvalidOperationException("Synchronous operations are disallowed. Call ReadAsync or set AllowSynchronousIO to true instead.");
        }

        if (_features.Context.IsOnOwnIoThread)
        {
            // The handler runs on the connection's I/O thread (a libuv or io_uring loop, a sockets lane): blocking there
            // would stop the receive that brings the body, and every connection of that thread with it. Bytes already
            // buffered are read; a read that would wait fails instead of hanging.
            if (!HasStartedReading)
            {
                StartReading();
            }

            try
            {
                if (Reader.TryReadWithoutWaiting(buffer, out int buffered))
                {
                    return Count(buffered);
                }
            }
            catch (FalconetBadHttpRequestException exception)
            {
                throw Translate(exception);
            }

            throw new InvalidOperationException(
                "A synchronous read of the request body would wait on the connection's I/O thread, which is the thread that " +
                "receives the body. Call ReadAsync, or run handlers on the thread pool (FalconetServerOptions.Scheduling = " +
                "IoScheduling.ThreadPool).");
        }

        // The application chose blocking reads on a thread that can wait: wait for them, as Kestrel does.
        byte[] rented = ArrayPool<byte>.Shared.Rent(buffer.Length);
        try
        {
            int read = ReadAsync(rented.AsMemory(0, buffer.Length)).AsTask().GetAwaiter().GetResult();
            rented.AsSpan(0, read).CopyTo(buffer);
            return read;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        // The stream belongs to the connection.
    }

    public override ValueTask DisposeAsync() => default;

    private void StartReading()
    {
        HasStartedReading = true;
        long limit = _features.EffectiveMaxRequestBodySize;
        if (_features.Context.Request.ContentLength > limit)
        {
            // Answered 413 with Connection: close when the application lets it through (see AspNetHttpApplication).
            throw new AspNetBadHttpRequestException("Request body too large.", 413);
        }
    }

    private int Count(int read)
    {
        _read += read;
        if (_read > _features.EffectiveMaxRequestBodySize)
        {
            throw new AspNetBadHttpRequestException("Request body too large.", 413);
        }

        return read;
    }

    private async ValueTask<int> AwaitReadAsync(ValueTask<int> read)
    {
        try
        {
            return Count(await read.ConfigureAwait(false));
        }
        catch (FalconetBadHttpRequestException exception)
        {
            throw Translate(exception);
        }
    }

    private AspNetBadHttpRequestException Translate(FalconetBadHttpRequestException exception)
        => Error = new AspNetBadHttpRequestException(exception.Message, exception.StatusCode, exception);
}

/// <summary>
/// The request body as a <see cref="PipeReader"/>: reads the body stream into one reused buffer from the shared array
/// pool, grown when the application examines everything and still needs more. One per connection, reset per request.
/// </summary>
internal sealed class AspNetRequestBodyPipeReader : PipeReader
{
    private const int MinimumReadSize = 4096;

    private readonly AspNetRequestBodyStream _body;
    private byte[] _buffer = Array.Empty<byte>();
    private int _start;
    private int _end;
    private bool _examinedAll;
    private bool _bodyEnded;
    private bool _cancelNext;

    public AspNetRequestBodyPipeReader(AspNetRequestBodyStream body)
    {
        _body = body;
    }

    public void Reset()
    {
        _start = 0;
        _end = 0;
        _examinedAll = false;
        _bodyEnded = false;
        _cancelNext = false;
        if (_buffer.Length != 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = Array.Empty<byte>();
        }
    }

    public override bool TryRead(out ReadResult result)
    {
        if (_end > _start && !_examinedAll || _bodyEnded)
        {
            result = Current();
            return true;
        }

        result = default;
        return false;
    }

    public override async ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
    {
        if (_cancelNext)
        {
            _cancelNext = false;
            return new ReadResult(new ReadOnlySequence<byte>(_buffer, _start, _end - _start), isCanceled: true, _bodyEnded);
        }

        if (TryRead(out ReadResult buffered))
        {
            return buffered;
        }

        MakeRoom();
        int read = await _body.ReadAsync(_buffer.AsMemory(_end), cancellationToken).ConfigureAwait(false);
        if (read == 0)
        {
            _bodyEnded = true;
        }

        _end += read;
        _examinedAll = false;
        return Current();
    }

    public override void AdvanceTo(SequencePosition consumed) => AdvanceTo(consumed, consumed);

    public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
    {
        int consumedAt = consumed.GetObject() is null ? _start : consumed.GetInteger();
        int examinedAt = examined.GetObject() is null ? _start : examined.GetInteger();
        if (consumedAt < _start || consumedAt > _end || examinedAt < consumedAt || examinedAt > _end)
        {
            throw new InvalidOperationException("The position is outside the data last read.");
        }

        _start = consumedAt;
        _examinedAll = examinedAt == _end;
        if (_start == _end)
        {
            _start = 0;
            _end = 0;
        }
    }

    public override void CancelPendingRead() => _cancelNext = true;

    public override void Complete(Exception? exception = null)
    {
        // The reader belongs to the connection; the unread rest of the body is drained or the connection closed.
    }

    private ReadResult Current()
        => new(new ReadOnlySequence<byte>(_buffer, _start, _end - _start), isCanceled: false, isCompleted: _bodyEnded);

    // Free space after the data: move the unconsumed bytes to the front, or grow when they fill the buffer.
    private void MakeRoom()
    {
        if (_buffer.Length - _end >= MinimumReadSize)
        {
            return;
        }

        int length = _end - _start;
        byte[] target = length + MinimumReadSize <= _buffer.Length
            ? _buffer
            : ArrayPool<byte>.Shared.Rent(Math.Max(length + MinimumReadSize, _buffer.Length * 2));
        Buffer.BlockCopy(_buffer, _start, target, 0, length);
        if (!ReferenceEquals(target, _buffer) && _buffer.Length != 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
        }

        _buffer = target;
        _start = 0;
        _end = length;
    }
}
