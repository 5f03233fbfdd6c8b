using System;

namespace Falconet.Transport.Tls;

/// <summary>
/// Record tracking: the TLS record framing of the bytes handed to SslStream, followed so that <see cref="TlsConnection"/>
/// knows when it may wait for the peer's records before SslStream reads.
/// </summary>
internal sealed partial class TlsTransportStream
{
    /// <summary>Content type 23: application data (in TLS 1.3 also every encrypted record, alerts and post-handshake messages included).</summary>
    private const byte ApplicationDataRecordType = 23;

    /// <summary>What a TLS 1.3 record adds to its plaintext without padding: the inner content type and a 16-byte tag.</summary>
    private const int Tls13RecordOverhead = 17;

    // The record framing of the bytes handed to SslStream (see SslStreamNeedsRecords).
    private long _handed;
    private long _drainedAt = -1;
    private long _otherRecordEnd;
    private RecordHeaderByte _nextHeaderByte;
    private int _recordType;
    private int _recordRemaining;
    private int _recordLengthHigh;
    private int _recordLength;
    private long _plaintextExpected;
    private long _plaintextReturned;
    private bool _framingLost;

    /// <summary>
    /// True when SslStream holds no whole record it has not processed and no bytes wait here: the next SslStream read
    /// would wait for the peer, so <see cref="TlsConnection"/> may wait for bytes first (<see cref="WaitForRecordsAsync"/>)
    /// and read once they are here, so that the read completes where it started. Holds only when no whole record other
    /// than application data (an alert, a handshake message: SslStream stops before those) arrived since SslStream last
    /// held no whole record, and while the record framing was followed.
    /// </summary>
    /// <remarks>Only meaningful after a read that returned less than it was asked for (no decrypted bytes left in SslStream).</remarks>
    public bool SslStreamNeedsRecords =>
        !_framingLost && _otherRecordEnd <= _drainedAt && (!CountsPlaintext || _plaintextExpected == _plaintextReturned) &&
        _prefetch is null && !_endOfStream;

    /// <summary>
    /// Set for TLS 1.3, where every record is application data on the outside, close_notify included (SslStream processes
    /// it with the data before it and reads 0 next, without the peer): the records since SslStream last held no whole
    /// record must then account for exactly the plaintext it returned (a record carries its plaintext, one byte of inner
    /// content type and a 16-byte tag). An alert, a padded record or a post-handshake message leaves them apart, and the
    /// next read goes through SslStream at once.
    /// </summary>
    public bool CountsPlaintext { get; set; }

    /// <summary>
    /// The bytes of the record being received that have not arrived yet (its body, once its 5-byte header is complete):
    /// 0 between records, in a header, or once the framing was lost.
    /// </summary>
    private int RecordBytesMissing => _framingLost || _nextHeaderByte != RecordHeaderByte.ContentType ? 0 : _recordRemaining;

    /// <summary>Plaintext SslStream returned to <see cref="TlsConnection"/>.</summary>
    public void Returned(int count) => _plaintextReturned += count;

    /// <summary>
    /// SslStream reads zero bytes only when it holds no whole record and no decrypted byte: every record before this point
    /// is processed and its plaintext returned.
    /// </summary>
    private void SslStreamDrained()
    {
        _drainedAt = _handed;
        _plaintextExpected = 0;
        _plaintextReturned = 0;
    }

    /// <summary>Follows the record framing of the bytes handed to SslStream (5-byte headers: type, version, length).</summary>
    private void Track(ReadOnlySpan<byte> data)
    {
        while (!data.IsEmpty && !_framingLost)
        {
            if (_recordRemaining > 0)
            {
                int take = Math.Min(data.Length, _recordRemaining);
                _recordRemaining -= take;
                _handed += take;
                data = data[take..];
                if (_recordRemaining == 0)
                {
                    RecordHanded();
                }

                continue;
            }

            byte value = data[0];
            data = data[1..];
            _handed++;
            switch (_nextHeaderByte)
            {
                case RecordHeaderByte.ContentType:
                    _recordType = value;
                    _framingLost = value is < 20 or > 24;
                    _nextHeaderByte = RecordHeaderByte.VersionMajor;
                    break;
                case RecordHeaderByte.VersionMajor:
                    _framingLost = value != 3;
                    _nextHeaderByte = RecordHeaderByte.VersionMinor;
                    break;
                case RecordHeaderByte.VersionMinor:
                    // Not checked: the record version is legacy (RFC 8446 section 5.1), 3.1 in a first ClientHello, 3.3 after.
                    _nextHeaderByte = RecordHeaderByte.LengthHigh;
                    break;
                case RecordHeaderByte.LengthHigh:
                    _recordLengthHigh = value;
                    _nextHeaderByte = RecordHeaderByte.LengthLow;
                    break;
                case RecordHeaderByte.LengthLow:
                    _recordRemaining = (_recordLengthHigh << 8) | value;
                    _recordLength = _recordRemaining;
                    _nextHeaderByte = RecordHeaderByte.ContentType;
                    if (_recordRemaining == 0)
                    {
                        RecordHanded();
                    }

                    break;
            }
        }
    }

    /// <summary>A whole record is with SslStream now.</summary>
    private void RecordHanded()
    {
        if (_recordType != ApplicationDataRecordType)
        {
            _otherRecordEnd = _handed;
        }
        else
        {
            _plaintextExpected += _recordLength - Tls13RecordOverhead;
        }
    }

    /// <summary>The byte of a 5-byte record header read next: content type, version (major, minor), length (high, low).</summary>
    private enum RecordHeaderByte : byte
    {
        ContentType,
        VersionMajor,
        VersionMinor,
        LengthHigh,
        LengthLow,
    }
}
