using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http;

/// <summary>A write-only <see cref="Stream"/> over the <see cref="HttpResponse"/> body; one per connection, so disposing it does nothing.</summary>
internal sealed class ResponseBodyStream : Stream
{
    private readonly HttpResponse _response;

    public ResponseBodyStream(HttpResponse response)
    {
        _response = response;
    }

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override void Write(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        _response.Write(buffer.AsSpan(offset, count));
    }

    public override void Write(ReadOnlySpan<byte> buffer) => _response.Write(buffer);

    public override void WriteByte(byte value) => _response.Write([value]);

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        => _response.WriteAsync(buffer, cancellationToken);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return _response.WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => _response.FlushAsync(cancellationToken).AsTask();

    public override void Flush()
    {
        // A synchronous flush would block on the socket; bytes are sent by FlushAsync or when the handler completes.
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        // The stream belongs to the connection and lives as long as it does.
    }

    public override ValueTask DisposeAsync() => default;
}
