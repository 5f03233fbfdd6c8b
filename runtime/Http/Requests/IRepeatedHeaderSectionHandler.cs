using System;

namespace Falconet.Http;

/// <summary>A header sink that keeps the section it was given last, so that a byte-for-byte repeat of it needs no parse.</summary>
internal interface IRepeatedHeaderSectionHandler
{
    /// <summary>
    /// When <paramref name="received"/> starts with the section kept last (up to and including its empty line), takes that
    /// section's headers as this request's and returns its length; otherwise 0, with nothing handed on.
    /// </summary>
    int TryRepeatHeaderSection(ReadOnlySpan<byte> received);

    /// <summary>Keeps the bytes of the section just parsed and completed (up to and including its empty line), or forgets the previous one.</summary>
    void RememberHeaderSection(ReadOnlySpan<byte> section);
}
