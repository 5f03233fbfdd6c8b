using System.Text.Json.Serialization;

namespace Falconet.Samples.Plaintext;

/// <summary>The body of the /json endpoint: {"message":"Hello, World!"}.</summary>
internal readonly record struct JsonMessage([property: JsonPropertyName("message")] string Message);

/// <summary>Source-generated serialization for <see cref="JsonMessage"/> (no reflection at run time).</summary>
[JsonSourceGenerationOptions(GenerationMode = JsonSourceGenerationMode.Serialization)]
[JsonSerializable(typeof(JsonMessage))]
internal sealed partial class PlaintextJsonContext : JsonSerializerContext
{
}
