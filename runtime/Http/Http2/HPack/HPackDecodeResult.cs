namespace Falconet.Http.Http2.HPack;

/// <summary>
/// The outcome of decoding one header block. <see cref="Success"/> and the two stream-level refusals leave the decoder
/// in step with the peer's encoder: the whole block was decoded and the dynamic table updated. Every other value is a
/// decoding error: a connection error of type COMPRESSION_ERROR (RFC 9113 section 4.3), after which the decoder's state
/// is lost and it must not be used again.
/// </summary>
public enum HPackDecodeResult : byte
{
    /// <summary>Every field was delivered.</summary>
    Success = 0,

    /// <summary>
    /// The fields delivered would exceed the header list limit (RFC 9113 accounting: name + value + 32 per field, counted
    /// for every field, a repeated reference too), or a name or value is longer than the string limit. Fields stop at
    /// the limit; the block was still decoded to its end. Refuse the stream: 431, or RST_STREAM (RFC 9113 section 10.5.1).
    /// </summary>
    HeaderListTooLarge = 1,

    /// <summary>
    /// A field name is not a lower-case token (RFC 9113 section 8.2.1: upper case is malformed in HTTP/2), a pseudo-header
    /// is undefined, or a value holds a control character, or starts or ends with whitespace. Fields stop at it; the
    /// block was still decoded to its end. Refuse the stream: RST_STREAM with PROTOCOL_ERROR (RFC 9113 section 8.1.1).
    /// </summary>
    MalformedField = 2,

    /// <summary>The block ends inside a field representation (a whole block was given: nothing more will come).</summary>
    Truncated = 16,

    /// <summary>An integer exceeds 2^31 - 1 or takes more than 5 continuation bytes (RFC 7541 section 5.1).</summary>
    IntegerOverflow = 17,

    /// <summary>An index is 0 or beyond the static and dynamic tables (RFC 7541 section 2.3.3).</summary>
    InvalidIndex = 18,

    /// <summary>A dynamic table size update exceeds the SETTINGS_HEADER_TABLE_SIZE advertised (RFC 7541 section 6.3).</summary>
    TableSizeUpdateTooLarge = 19,

    /// <summary>A dynamic table size update follows a field of the block (RFC 7541 section 4.2: only at the start).</summary>
    TableSizeUpdateAfterField = 20,

    /// <summary>A Huffman string holds EOS, or ends in more than 7 bits or in bits that are not all ones (RFC 7541 section 5.2).</summary>
    InvalidHuffman = 21,
}

/// <summary>The categories of <see cref="HPackDecodeResult"/>.</summary>
public static class HPackDecodeResults
{
    /// <summary>True for a decoding error: COMPRESSION_ERROR, the decoder unusable.</summary>
    public static bool IsCompressionError(this HPackDecodeResult result) => result >= HPackDecodeResult.Truncated;
}
