using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http;

/// <summary>A read-only, asynchronous-only <see cref="Stream"/> over the <see cref="RequestBodyReader"/>; one per connection, so disposing it does nothing.</summary>
internal sealed class RequestBodyStream : Stream
{
    private readonly RequestBodyReader _reader;

    public RequestBodyStream(RequestBodyReader reader)
    {
        _reader = reader;
    }

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        => _reader.ReadAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return _reader.ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    // A blocking read could wait for a completion that must run on the very thread it blocks (the socket engine's thread
    // with inline completions, or the connection's I/O or loop thread).
    public override int Read(byte[] buffer, int offset, int count)
        => throw new NotSupportedException("Synchronous reads of the request body are not supported; use ReadAsync.");

    public override int Read(Span<byte> buffer)
        => throw new NotSupportedException("Synchronous reads of the request body are not supported; use ReadAsync.");

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        // The stream belongs to the connection and lives as long as it does.
    }

    public override ValueTask DisposeAsync() => default;
}
