export { openAiResponseRoutes } from "./routes";
export { isOpenAiPath, openAiErrorResponse } from "./errors";
